package bridge

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
)

// SkillLite's tool_call_id, carried as the CloudEvents extension toolcallid,
// is readable with plain SQL from the events table's ext column, and joins
// tool_calls rows with SkillLite's transcripts (the queries of
// docs/bridge-skilllite.md).
func TestToolCallIDInSQL(t *testing.T) {
	p := adaptertest.StartPipeline(t)
	args := []string{"-agent", "skilllite", "-source", testSource, "-in", filepath.Join(fixtures, "no_replan.jsonl"), "-nats", p.Srv.ClientURL()}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, errOut.String())
	}
	p.Settle(t)

	rows, err := p.Store.DB().QueryContext(t.Context(), `
		SELECT t.tool, e.ext->>'toolcallid'
		FROM tool_calls t
		JOIN events e ON e.source = t.source AND e.id = t.event_id
		ORDER BY t.session, t.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var tool string
		var id *string
		if err := rows.Scan(&tool, &id); err != nil {
			t.Fatal(err)
		}
		if id == nil {
			got = append(got, tool+" NULL")
			continue
		}
		got = append(got, tool+" "+*id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"read_file call_01", "complete_task call_02", "write_file call_03", "complete_task call_04"}
	if !slices.Equal(got, want) {
		t.Errorf("tool calls and their toolcallid = %q, want %q", got, want)
	}

	// The join with SkillLite's own transcript: every call finds its result.
	transcript := filepath.Join(fixtures, "transcripts", "default-2026-06-28.jsonl")
	q := fmt.Sprintf(`
		SELECT count(*)
		FROM tool_calls t
		JOIN events e ON e.source = t.source AND e.id = t.event_id
		JOIN read_json('%s', format = 'newline_delimited', union_by_name = true) r
		  ON r.type = 'tool_result' AND r.tool_call_id = (e.ext->>'toolcallid') AND r.name = t.tool`, transcript)
	if n := p.Count(t, q); n != int64(len(want)) {
		t.Errorf("tool calls joined with the transcript's results: %d, want %d", n, len(want))
	}
}
