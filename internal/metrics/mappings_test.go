package metrics

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/taxonomy"
)

func mappingsByType(rows []MappingRow) map[string]MappingRow {
	m := make(map[string]MappingRow, len(rows))
	for _, r := range rows {
		m[r.TaskType.String()] = r
	}
	return m
}

// testdata/analyze/mappings_weeks.jsonl: one testing and one coding session
// a week for four weeks (Mondays 10:00 and 11:00 from 2025-06-02). Testing
// calls run_command 3 times and write_file once every week: stable. Coding
// calls write_file 3 times and read_file once, except in week 2, where it
// is the other way round: not stable.
func TestMappingsStability(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "mappings_weeks.jsonl"))
	res, err := Mappings(context.Background(), src, Filter{}, taxonomy.Default(), DefaultMappingsConfig())
	if err != nil {
		t.Fatal(err)
	}
	wantEnd := time.Date(2025, 6, 23, 11, 0, 0, 1000, time.UTC) // the last start + 1µs
	if !res.WindowEnd.Equal(wantEnd) {
		t.Errorf("window end %s, want %s", res.WindowEnd, wantEnd)
	}
	got := mappingsByType(res.Rows)
	testing_, coding := got["testing"], got["coding"]
	if len(got) != 2 {
		t.Fatalf("types %v, want coding and testing", hintKeys(got))
	}
	if testing_.Calls != 16 || *testing_.TopTool != "run_command" || !ptrNear(testing_.TopShare, 0.75) || !testing_.Stable {
		t.Errorf("testing: %d calls, top %v %v, stable %v; want 16, run_command 0.75, stable", testing_.Calls, *testing_.TopTool, deref(testing_.TopShare), testing_.Stable)
	}
	// H(0.75, 0.25) = 0.811278 bits.
	if math.Abs(testing_.Entropy-0.8112781244591328) > 1e-12 {
		t.Errorf("testing entropy %v, want 0.8112781", testing_.Entropy)
	}
	if coding.Calls != 16 || *coding.TopTool != "write_file" || !ptrNear(coding.TopShare, 10.0/16) || coding.Stable {
		t.Errorf("coding: %d calls, top %v %v, stable %v; want 16, write_file 0.625, not stable", coding.Calls, *coding.TopTool, deref(coding.TopShare), coding.Stable)
	}
	var holds []bool
	for i, w := range coding.Windows {
		holds = append(holds, w.Holds)
		if w.Window != i+1 || w.Calls != 4 || !w.Until.Equal(wantEnd.Add(-time.Duration(i)*7*24*time.Hour)) {
			t.Errorf("coding window %d: %+v, want window %d with 4 calls ending %s", i, w, i+1, wantEnd.Add(-time.Duration(i)*7*24*time.Hour))
		}
	}
	// Window 1 is the latest week; week 2 of the data is window 3.
	if !reflect.DeepEqual(holds, []bool{true, true, false, true}) {
		t.Errorf("coding windows hold %v, want [true true false true]", holds)
	}
	if w := coding.Windows[2]; *w.TopTool != "read_file" || !ptrNear(w.TopShare, 0.75) {
		t.Errorf("coding window 3: top %v %v, want read_file 0.75", *w.TopTool, deref(w.TopShare))
	}
	tools := coding.Tools
	if len(tools) != 2 || tools[0].Tool != "write_file" || tools[0].Calls != 10 || !ptrNear(tools[0].Share, 0.625) || !ptrNear(tools[0].SuccessRate, 1) {
		t.Errorf("coding tools %+v, want write_file 10 (0.625) first", tools)
	}
}

// Thresholds and windows move with the flags: with a stable share of 0.8
// nothing is stable; with 2 windows of 7 days coding is (weeks 3 and 4
// agree); with a window ending before the data, no window has calls.
func TestMappingsConfig(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "mappings_weeks.jsonl"))
	ctx := context.Background()
	tax := taxonomy.Default()
	week := 7 * 24 * time.Hour
	tests := []struct {
		name          string
		f             Filter
		cfg           MappingsConfig
		testing, code bool
	}{
		{"defaults", Filter{}, DefaultMappingsConfig(), true, false},
		{"share 0.8", Filter{}, MappingsConfig{StableShare: 0.8, Windows: 4, Window: week}, false, false},
		{"two windows", Filter{}, MappingsConfig{StableShare: 0.5, Windows: 2, Window: week}, true, true},
		{"five windows", Filter{}, MappingsConfig{StableShare: 0.5, Windows: 5, Window: week}, false, false},
		{"until the third week", Filter{Until: time.Date(2025, 6, 17, 0, 0, 0, 0, time.UTC)}, MappingsConfig{StableShare: 0.5, Windows: 1, Window: week}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Mappings(ctx, src, tt.f, tax, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := mappingsByType(res.Rows)
			if got["testing"].Stable != tt.testing || got["coding"].Stable != tt.code {
				t.Fatalf("stable: testing %v, coding %v; want %v, %v", got["testing"].Stable, got["coding"].Stable, tt.testing, tt.code)
			}
		})
	}
}

// Zero calls: no rows. Bad configuration: every problem at once.
func TestMappingsEdges(t *testing.T) {
	src := ingestedDB(t, nil, analyzeFixture(t, "mappings_weeks.jsonl"))
	ctx := context.Background()
	res, err := Mappings(ctx, src, Filter{TaskType: "docs"}, taxonomy.Default(), DefaultMappingsConfig())
	if err != nil || len(res.Rows) != 0 {
		t.Fatalf("Mappings(task type docs) = %+v, %v; want no rows", res, err)
	}
	_, err = Mappings(ctx, src, Filter{}, taxonomy.Default(), MappingsConfig{StableShare: 2, Windows: 0, Window: 0})
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, flag := range []string{"-stable-share", "-windows", "-window"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("error %q does not mention %s", err, flag)
		}
	}
}

func TestMappingsOutOfOrder(t *testing.T) {
	ctx := context.Background()
	b := analyzeFixture(t, "mappings_weeks.jsonl")
	want, err := Mappings(ctx, ingestedDB(t, nil, b), Filter{}, taxonomy.Default(), DefaultMappingsConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Mappings(ctx, ingestedDB(t, rand.New(rand.NewPCG(1, 2)), b), Filter{}, taxonomy.Default(), DefaultMappingsConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shuffled: %+v\nwant %+v", got, want)
	}
}
