package skilllite

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

func TestReadTranscripts(t *testing.T) {
	tr, err := ReadTranscripts(filepath.Join(fixtures, "transcripts"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Calls != 4 || tr.Ambiguous != 1 || tr.Malformed != 1 {
		t.Errorf("read %d calls, %d ambiguous, %d malformed; want 4, 1, 1", tr.Calls, tr.Ambiguous, tr.Malformed)
	}
	c, ok := tr.Lookup("call_03", "write_file")
	if t0 := time.Unix(1782640800, 0).UTC(); !ok || !c.Called.Equal(t0.Add(9*time.Second)) || !c.Returned.Equal(t0.Add(11*time.Second)) || c.ElapsedMS != 1530 {
		t.Errorf("call_03 = %+v, %v", c, ok)
	}
	if _, ok := tr.Lookup("call_03", "read_file"); ok {
		t.Error("a tool_call_id found under another tool's name")
	}
	if _, ok := tr.Lookup("call_09", "run_command"); ok {
		t.Error("an id seen in two calls is found")
	}
	if _, err := ReadTranscripts(filepath.Join(fixtures, "no-such-dir")); err == nil {
		t.Error("a missing directory is no error")
	}
}

// A recorded stdout joined with the transcripts gets their times: the tool
// calls theirs, with elapsed_ms as durations; the lines between, the time
// before them; the session, from its first call to its last result.
func TestTranscriptTimes(t *testing.T) {
	tr, err := ReadTranscripts(filepath.Join(fixtures, "transcripts"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig
	cfg.Transcripts = tr
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	x := NewTranslator(cfg, w, testClock())
	ctx := context.Background()
	if err := x.ReadLines(ctx, bytes.NewReader(readFixture(t, "no_replan.jsonl")), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	evs := adaptertest.DecodeLines(t, buf.Bytes())
	t0 := time.Unix(1782640800, 0).UTC()
	var got []string
	for _, e := range evs {
		got = append(got, e.Time.Sub(t0).String()+" "+adaptertest.Render(t, e))
	}
	want := []string{
		`4s started goal="Read README.md" agent=skilllite model=unknown tools=complete_task,update_task_plan,read_file,write_file`,
		`4s plan.created model tasks=[1 2]`,
		`4s model - task=1 tokens=2100/150/-`,
		`4s tool read_file task=1 hint=file_read ok ms=12`,
		`4s tool complete_task task=1 hint=file_read ok control`,
		`4s task.completed 1 success calls=2 reported=success summary="README read"`,
		`4s model - task=2 tokens=2300/150/-`,
		`11s tool write_file task=2 hint=file_write ok ms=1530`,
		`11s tool complete_task task=2 hint=file_write ok control ms=1`,
		`11s task.completed 2 success calls=2 reported=success`,
		`11s ended success replans=0 calls=4 failed=0 iterations=2 ms=7000 usage=2:4400/300/-`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events:\n%v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %s, want %s", i+1, got[i], want[i])
		}
	}
	for _, e := range evs {
		if e.Type == events.ToolCalled && e.Extensions[ToolCallIDExtension] == nil {
			t.Errorf("event %d has no tool_call_id", e.Seq)
		}
	}
}
