package analyze

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestMappingsGolden(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	weeks := buildEventsDB(t, nil, fixture("mappings_weeks.jsonl"))
	tests := []struct {
		name, golden string
		args         []string
	}{
		{"sample sessions", "mappings_valid.golden.json", []string{"-db", valid}},
		{"four weeks", "mappings_weeks.golden.json", []string{"-db", weeks}},
		{"four weeks, two windows of 14 days", "mappings_weeks_14d.golden.json", []string{"-db", weeks, "-window", "14d", "-windows", "2", "-stable-share", "0.6"}},
		{"no session matches", "mappings_empty.golden.json", []string{"-db", weeks, "-agent", "nobody"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, tt.golden, runForJSON(t, append([]string{"mappings"}, tt.args...)...))
		})
	}
}

func TestMappingsShape(t *testing.T) {
	valid := buildEventsDB(t, nil, validSessions(t)...)
	weeks := buildEventsDB(t, nil, fixture("mappings_weeks.jsonl"))
	checkShape(t, "mappings.shape.txt",
		runForJSON(t, "mappings", "-db", weeks),
		runForJSON(t, "mappings", "-db", valid, "-by", "agent,agent_version,model,day,week,ruleset"),
		runForJSON(t, "mappings", "-db", weeks, "-until", "2025-06-10", "-windows", "3"),
		runForJSON(t, "mappings", "-db", valid, "-agent", "nobody"),
	)
}

func TestMappingsFormats(t *testing.T) {
	db := buildEventsDB(t, nil, fixture("mappings_weeks.jsonl"))
	csv := runForOutput(t, "mappings", "-db", db, "-format", "csv", "-by", "agent")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "agent,task_type,calls,") || !strings.HasPrefix(lines[1], "skilllite,coding,16,") {
		t.Fatalf("csv = %q, want agent, task_type first and two types", csv)
	}
}

func TestMappingsUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"mappings", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "-stable-share") {
		t.Fatalf("mappings -h = %v, printed %q; want nil and the flags", err, stderr.String())
	}
	for _, args := range [][]string{
		{"mappings", "-window", "soon"},
		{"mappings", "-stable-share", "0", "-windows", "0"},
	} {
		stderr.Reset()
		if err := run(context.Background(), args, &stdout, &stderr); err != errUsage || !strings.Contains(stderr.String(), args[1]) {
			t.Errorf("%v: err = %v, stderr %q; want errUsage naming %s", args, err, stderr.String(), args[1])
		}
	}
}
