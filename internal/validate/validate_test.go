package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/validate"
)

func newValidator(tb testing.TB) *validate.Validator {
	tb.Helper()
	v, err := validate.New()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// An event breaking the contract in four places gets four violations, not
// only the first the decoder meets.
func TestEventListsEveryViolation(t *testing.T) {
	v := newValidator(t)
	raw := `{"specversion":"1.0","id":"x","source":"a/b","type":"agent.tool.called","time":"2026-01-01 10:00:00","subject":"","datacontenttype":"application/json","seq":0,"data":{}}`
	got := v.Event([]byte(raw))
	var paths []string
	for _, viol := range got {
		paths = append(paths, viol.Path)
		if viol.Code != "schema_violation" {
			t.Errorf("violation %v has code %q, want schema_violation", viol, viol.Code)
		}
	}
	for _, want := range []string{"/data", "/seq", "/subject", "/time"} {
		if !strings.Contains(strings.Join(paths, " "), want) {
			t.Errorf("Event(...) = %v, want a violation at %s", got, want)
		}
	}
}

// The contract's latest version is checked: outcome "unknown" (v1.1) is
// valid, a value no version has is not.
func TestEventOutcomeUnknown(t *testing.T) {
	v := newValidator(t)
	ended := func(outcome string) []byte {
		return []byte(`{"specversion":"1.0","id":"x","source":"a","type":"agent.session.ended","time":"2026-01-01T10:00:00Z","subject":"s","datacontenttype":"application/json","seq":2,` +
			`"data":{"outcome":"` + outcome + `","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":1,"duration_ms":5}}`)
	}
	if got := v.Event(ended("unknown")); len(got) != 0 {
		t.Errorf("Event(outcome unknown) = %v, want no violation", got)
	}
	if got := v.Event(ended("cancelled")); len(got) != 1 || got[0].Path != "/data/outcome" {
		t.Errorf("Event(outcome cancelled) = %v, want one violation at /data/outcome", got)
	}
}

// What JSON parsing hides from the schema (a duplicate member name) is
// reported by the decoder, beside what the schema finds.
func TestEventReportsIJSONAndSchemaViolations(t *testing.T) {
	v := newValidator(t)
	got := v.Event([]byte(`{"seq":1,"seq":2}`))
	if len(got) < 2 || got[0].Code != "malformed_json" || !strings.Contains(got[0].Msg, "duplicate") {
		t.Fatalf("Event(duplicate member) = %v, want the duplicate first, then the schema's violations", got)
	}
	if got := v.Event([]byte(`{bad`)); len(got) != 1 || got[0].Code != "malformed_json" {
		t.Fatalf("Event({bad) = %v, want one malformed_json", got)
	}
}

// Every valid sample has no violation; every invalid fixture at least one,
// its first of the code the fixture is named by.
func TestFixtures(t *testing.T) {
	v := newValidator(t)
	valid, _ := filepath.Glob("../../testdata/events/valid/*.jsonl")
	if len(valid) == 0 {
		t.Fatal("no valid samples")
	}
	for _, f := range valid {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := v.File(t.Context(), bytes.NewReader(b), 0, func(line int64, viol validate.Violation) {
			t.Errorf("%s:%d: %v", f, line, viol)
		})
		if err != nil || sum.Events == 0 || sum.Invalid != 0 {
			t.Errorf("File(%s) = %+v, %v; want events and none invalid", f, sum, err)
		}
	}
	invalid, _ := filepath.Glob("../../testdata/events/invalid/*.json")
	if len(invalid) == 0 {
		t.Fatal("no invalid fixtures")
	}
	for _, f := range invalid {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code, _, _ := strings.Cut(filepath.Base(f), "__")
		got := v.Event(b)
		if len(got) == 0 || got[0].Code != code {
			t.Errorf("Event(%s) = %v, want violations, the first %s", filepath.Base(f), got, code)
		}
	}
}

// File numbers lines from 1, skips blank ones and reports oversize events.
func TestFileLinesAndOversize(t *testing.T) {
	v := newValidator(t)
	in := "\n{bad\n\n" + `{"x":"` + strings.Repeat("y", 100) + `"}` + "\n"
	var lines []int64
	var codes []string
	sum, err := v.File(t.Context(), strings.NewReader(in), 50, func(line int64, viol validate.Violation) {
		lines = append(lines, line)
		codes = append(codes, viol.Code)
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum != (validate.Summary{Events: 2, Invalid: 2}) {
		t.Fatalf("File = %+v, want 2 events, 2 invalid", sum)
	}
	if lines[0] != 2 || lines[1] != 4 || codes[1] != "oversize" {
		t.Fatalf("File reported lines %v codes %v, want line 2 then line 4 oversize first", lines, codes)
	}
}
