package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The StepTimer sees every statement of a commit, in the order Write runs
// them, once per batch: what bench write-steps reports.
func TestStepTimer(t *testing.T) {
	var got []string
	s, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "s.duckdb"), Options{
		StepTimer: func(step string, took time.Duration) {
			if took < 0 {
				t.Errorf("step %s took %s", step, took)
			}
			got = append(got, step)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := Batch{Origin: FromNATS, Stream: "EVO", Position: 2, Items: []Item{
		{Event: newEvent(t, "coder/h/w1", "s1", 1), StreamSeq: 1},
		{Event: newEvent(t, "coder/h/w1", "s1", 2), StreamSeq: 2},
	}}
	if _, err := s.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	want := []string{"dedupe", "begin", "append rows", "flush events"}
	for _, tt := range typedTables {
		want = append(want, "flush "+tt.name)
	}
	want = append(want, "flush facts_pending", "flush dead_letters", "save position", "record batch", "commit")
	if !slices.Equal(got, want) {
		t.Fatalf("steps = %q, want %q", got, want)
	}
}
