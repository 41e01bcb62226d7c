package agentsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/sim"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// runCmd runs the command with args and returns stdout, stderr and the
// error.
func runCmd(tb testing.TB, args ...string) (string, string, error) {
	tb.Helper()
	var out, errOut bytes.Buffer
	err := run(tb.Context(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// withoutIDs reads JSON lines and blanks the ids (UUIDv7) and numbers the
// session ids by first appearance.
func withoutIDs(tb testing.TB, out string) []string {
	tb.Helper()
	sessions := map[string]int{}
	var lines []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
		sub := m["subject"].(string)
		if _, ok := sessions[sub]; !ok {
			sessions[sub] = len(sessions) + 1
		}
		m["id"], m["subject"] = "", sessions[sub]
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	return lines
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr error    // errors.Is; nil with wantMsg empty: success
		wantMsg string   // in the error
		want    []string // in stdout + stderr
	}{
		{"help", []string{"help"}, nil, "", []string{"agentsim demo [flags]", "agentsim truth"}},
		{"simulate -h", []string{"-h"}, nil, "", []string{"agentsim demo", "-rate", "-out", "-nats", "-rules-bucket", "-seed", "-scenario"}},
		{"demo -h", []string{"demo", "-h"}, nil, "", []string{"-generations", "-sessions", "-seed", "-db", "-dir", "-json", "first-try"}},
		{"truth -h", []string{"truth", "-h"}, nil, "", []string{"ground truth", "-json"}},
		{"scenario -h", []string{"scenario", "-h"}, nil, "", []string{"default scenario"}},
		{"unknown flag", []string{"-nope"}, cli.ErrUsage, "", []string{"flag provided but not defined"}},
		{"stray argument", []string{"demo", "extra"}, cli.ErrUsage, "", []string{"unexpected arguments"}},
		{"bad values", []string{"-rate", "-1", "-sessions", "-2", "-start", "yesterday"}, cli.ErrUsage, "", []string{"-rate -1", "-sessions -2", `-start "yesterday"`}},
		{"bad generations", []string{"demo", "-generations", "0"}, cli.ErrUsage, "", []string{"-generations 0"}},
		{"bad scenario file", []string{"truth", "-scenario", "/nonexistent/s.json"}, nil, "read scenario", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, tt.args...)
			if tt.wantMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("run(%q) = %v, want an error containing %q", tt.args, err, tt.wantMsg)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("run(%q) = %v, want %v", tt.args, err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("run(%q) printed\n%s%s\nwant it to contain %q", tt.args, out, errOut, w)
				}
			}
		})
	}
}

func TestScenarioAndTruthCommands(t *testing.T) {
	out, _, err := runCmd(t, "scenario")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Parse([]byte(out)); err != nil {
		t.Errorf("agentsim scenario printed a scenario that does not parse: %v", err)
	}
	out, _, err = runCmd(t, "truth")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"search_web", "grep 0.49→0.30", "docs"} {
		if !strings.Contains(out, w) {
			t.Errorf("agentsim truth printed\n%s\nwant it to contain %q", out, w)
		}
	}
	out, _, err = runCmd(t, "truth", "-json", "-scenario", "../../../testdata/agentsim/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr sim.Truth
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("truth -json: %v\n%s", err, out)
	}
	if len(tr.Types) != 1 || tr.Types[0].BestTool != "search_web" || strings.Join(tr.Types[0].Avoid, ",") != "grep" {
		t.Errorf("truth of minimal.json = %+v, want search_web best and grep to avoid", tr.Types)
	}
}

func TestSimulateToFileIsReproducible(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.json")
	rs := `{"version":"rs-test","rules":[{"id":"avoid:search:grep","kind":"avoid","task_type":"search","tool_hint":"grep","instead":"search_web"}]}`
	if err := os.WriteFile(rulesFile, []byte(rs), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"-sessions", "40", "-seed", "5"}
	outputs := map[string][]string{}
	for _, run := range []struct {
		name string
		args []string
	}{
		{"a", []string{"-out", filepath.Join(dir, "a.jsonl"), "-concurrency", "1"}},
		{"b", []string{"-out", filepath.Join(dir, "b.jsonl"), "-concurrency", "8"}},
		{"stdout", []string{"-out", "-"}},
		{"seed 6", []string{"-out", "-", "-seed", "6"}},
		{"rules", []string{"-out", "-", "-rules", rulesFile}},
	} {
		out, errOut, err := runCmd(t, append(append([]string{}, base...), run.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", run.name, err, errOut)
		}
		if !strings.Contains(errOut, "40 sessions") {
			t.Errorf("%s: stderr %q, want the summary", run.name, errOut)
		}
		if f := run.args[1]; f != "-" {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		outputs[run.name] = withoutIDs(t, out)
	}
	same := func(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }
	if !same(outputs["a"], outputs["b"]) || !same(outputs["a"], outputs["stdout"]) {
		t.Error("the same seed gave different events")
	}
	if same(outputs["a"], outputs["seed 6"]) {
		t.Error("seeds 5 and 6 gave the same events")
	}
	var started events.SessionStartedData
	var e map[string]json.RawMessage
	json.Unmarshal([]byte(outputs["rules"][0]), &e)
	json.Unmarshal(e["data"], &started)
	if started.Ruleset != "rs-test" || len(started.Rules) != 1 {
		t.Errorf("with -rules, session.started has ruleset %q rules %v, want rs-test and one rule", started.Ruleset, started.Rules)
	}
}

// Against a NATS server: the events land in the stream, and the agents
// load the rules published in the bucket.
func TestSimulateToNATS(t *testing.T) {
	srv, _, js := testkit.Embedded(t)
	ctx := t.Context()
	kv, err := bus.EnsureRulesBucket(ctx, js, bus.DefaultRulesBucket())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, ruleset.GlobalKey, []byte(`{"version":"rs-global","rules":[]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "alpha", []byte(`{"version":"rs-alpha","rules":[{"id":"r1","kind":"prefer","task_type":"ops","tool_hint":"run_command"}]}`)); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCmd(t, "-nats", srv.ClientURL(), "-sessions", "30", "-rate", "2000",
		"-scenario", "../../../testdata/agentsim/two-agents.json")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	st, err := js.Stream(ctx, "EVO")
	if err != nil {
		t.Fatalf("the stream was not created: %v", err)
	}
	info, _ := st.Info(ctx)
	rulesets := map[string]string{}
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		e, err := events.Decode(m.Data)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		if e.Type == events.SessionStarted {
			var d events.SessionStartedData
			json.Unmarshal(e.Data, &d)
			rulesets[d.Agent] = d.Ruleset
		}
	}
	if info.State.Msgs == 0 || !strings.Contains(errOut, itoa(info.State.Msgs)+" events") {
		t.Errorf("stream holds %d messages; stderr says %q", info.State.Msgs, errOut)
	}
	// alpha has its own key; beta falls back to global.
	if rulesets["alpha"] != "rs-alpha" || rulesets["beta"] != "rs-global" {
		t.Errorf("rule sets loaded = %v, want alpha rs-alpha and beta rs-global", rulesets)
	}
}

// With no -nats, an embedded server keeps the events in -store, where the
// ingest command's embedded server finds them.
func TestSimulateToEmbeddedStore(t *testing.T) {
	store := filepath.Join(t.TempDir(), "evosignal.jetstream")
	if _, errOut, err := runCmd(t, "-store", store, "-sessions", "10"); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: store}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, js := testkit.Client(t, srv.ClientURL())
	st, err := js.Stream(t.Context(), "EVO")
	if err != nil {
		t.Fatalf("stream after the run: %v", err)
	}
	info, _ := st.Info(t.Context())
	if info.State.Msgs == 0 {
		t.Error("the embedded store holds no events")
	}
	if _, err := js.KeyValue(t.Context(), "evosignal_rules"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("the simulator created the rules bucket (%v); that is the analyzer's", err)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
