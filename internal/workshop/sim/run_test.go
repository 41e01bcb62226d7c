package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
)

type discard struct{ n atomic.Int64 }

func (d *discard) Send(context.Context, *events.Event) error { d.n.Add(1); return nil }

// jsonl runs cfg with its events written as JSON lines.
func jsonl(tb testing.TB, cfg Config) (string, Summary) {
	tb.Helper()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	cfg.Ordered = true
	sum, err := Run(tb.Context(), cfg, w)
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.String(), sum
}

// normalize replaces the ids (random UUIDv7s) with their order of first
// appearance: event ids are all distinct, session ids are per session.
func normalize(tb testing.TB, out string) []string {
	tb.Helper()
	sessions := map[string]string{}
	var lines []string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("line %d: %v", i+1, err)
		}
		m["id"] = "id"
		sub := m["subject"].(string)
		if _, ok := sessions[sub]; !ok {
			sessions[sub] = fmt.Sprintf("session-%d", len(sessions)+1)
		}
		m["subject"] = sessions[sub]
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	return lines
}

func TestSameSeedSameEvents(t *testing.T) {
	sc := Default()
	base := Config{Scenario: sc, Seed: 42, Sessions: 60}
	tests := []struct {
		name   string
		change func(*Config)
		same   bool
	}{
		{"same seed", func(*Config) {}, true},
		{"same seed, other concurrency", func(c *Config) { c.Concurrency = 1 }, true},
		{"same seed, more concurrency", func(c *Config) { c.Concurrency = 16 }, true},
		{"other seed", func(c *Config) { c.Seed = 43 }, false},
		{"other start", func(c *Config) { c.Start = DefaultStart.Add(time.Hour) }, false},
		{"with rules", func(c *Config) {
			c.Rules = func(string) ruleset.RuleSet {
				return ruleset.RuleSet{Version: "v1", Rules: []ruleset.Rule{{ID: "r", Kind: ruleset.KindAvoid, TaskType: "search", ToolHint: "grep", Instead: "search_web"}}}
			}
		}, false},
	}
	out, sum := jsonl(t, base)
	want := normalize(t, out)
	if int64(len(want)) != sum.Events || sum.Sessions != 60 {
		t.Fatalf("%d lines, summary says %d events of %d sessions", len(want), sum.Events, sum.Sessions)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.change(&cfg)
			out, _ := jsonl(t, cfg)
			got := normalize(t, out)
			same := len(got) == len(want)
			for i := 0; same && i < len(got); i++ {
				same = got[i] == want[i]
			}
			if same != tt.same {
				t.Errorf("output the same as the base run: %v, want %v", same, tt.same)
			}
		})
	}
}

// Every event the simulator emits passes the contract, sessions are
// complete, and the summary agrees with the events.
func TestEventsKeepTheContract(t *testing.T) {
	for _, file := range []string{"", filepath.Join(testdata, "two-agents.json"), filepath.Join(testdata, "minimal.json")} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sc, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			out, sum := jsonl(t, Config{Scenario: sc, Seed: 1, Sessions: 80})
			byType := map[events.Type]int64{}
			agents := map[string]bool{}
			var last time.Time
			perSession := map[string]int64{}
			for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
				e, err := events.Decode([]byte(line))
				if err != nil {
					t.Fatalf("line %d does not keep the contract: %v\n%s", i+1, err, line)
				}
				byType[e.Type]++
				agents[events.AgentOf(e.Source)] = true
				perSession[e.Subject]++
				if e.Seq != perSession[e.Subject] {
					t.Fatalf("line %d: seq %d, want %d", i+1, e.Seq, perSession[e.Subject])
				}
				if e.Seq > 1 && e.Time.Before(last) {
					t.Fatalf("line %d: time %s before the previous event's %s", i+1, e.Time, last)
				}
				last = e.Time
			}
			if byType[events.SessionStarted] != 80 || byType[events.SessionEnded] != 80 {
				t.Errorf("%d sessions started, %d ended, want 80 each", byType[events.SessionStarted], byType[events.SessionEnded])
			}
			for typ, n := range byType {
				if sum.EventsByType[string(typ)] != n {
					t.Errorf("summary counts %d %s, the output %d", sum.EventsByType[string(typ)], typ, n)
				}
			}
			if len(agents) != len(sc.Fleet.Agents) {
				t.Errorf("agents seen %v, want %v", agents, sc.Fleet.Agents)
			}
			if sum.Successes+sum.Failures != sum.Sessions || sum.FirstTry > sum.Successes {
				t.Errorf("summary does not add up: %+v", sum)
			}
		})
	}
}

// The rules change the model's hints, and the model follows them: with the
// rules the ground truth calls for, the fleet does much better.
func TestRulesMatter(t *testing.T) {
	sc := Default()
	var fix []ruleset.Rule
	for _, tt := range sc.Truth().Types {
		for _, tool := range tt.Avoid {
			fix = append(fix, ruleset.Rule{ID: "avoid:" + tt.TaskType + ":" + tool, Kind: ruleset.KindAvoid, TaskType: tt.TaskType, ToolHint: tool, Instead: tt.BestTool})
		}
		fix = append(fix, ruleset.Rule{ID: "prefer:" + tt.TaskType, Kind: ruleset.KindPrefer, TaskType: tt.TaskType, ToolHint: tt.BestTool})
	}
	rs := ruleset.RuleSet{Version: "truth", Rules: fix}
	if err := rs.Validate(); err != nil {
		t.Fatal(err)
	}
	_, without := jsonl(t, Config{Scenario: sc, Seed: 3, Sessions: 400})
	_, with := jsonl(t, Config{Scenario: sc, Seed: 3, Sessions: 400, Rules: func(string) ruleset.RuleSet { return rs }})
	rate := func(k, n int64) float64 { return float64(k) / float64(n) }
	if a, b := rate(without.FirstTry, without.Sessions), rate(with.FirstTry, with.Sessions); b < a+0.2 {
		t.Errorf("first-try success %.3f without rules, %.3f with: want an improvement of at least 0.2", a, b)
	}
	if a, b := rate(without.Replans, without.Sessions), rate(with.Replans, with.Sessions); b > a/2 {
		t.Errorf("avg replans %.3f without rules, %.3f with: want at most half", a, b)
	}
	if a, b := rate(without.FailedCalls, without.RealCalls), rate(with.FailedCalls, with.RealCalls); b > a*0.7 {
		t.Errorf("tool failure rate %.3f without rules, %.3f with: want at most 70%%", a, b)
	}
	if with.RulesetsApplied["truth"] != 400 || without.RulesetsApplied[""] != 400 {
		t.Errorf("rule sets applied: with %v, without %v", with.RulesetsApplied, without.RulesetsApplied)
	}
	if with.EventsByType[string(events.HintStripped)] <= without.EventsByType[string(events.HintStripped)] {
		t.Errorf("hints stripped: %d with rules, %d without; the avoid rules strip more",
			with.EventsByType[string(events.HintStripped)], without.EventsByType[string(events.HintStripped)])
	}
}

func TestDefaultTruth(t *testing.T) {
	tr := Default().Truth()
	tests := []struct {
		taskType, best string
		success        float64
		avoid          string
	}{
		{"search", "search_web", 0.92, "grep"},
		{"coding", "edit_file", 0.9, "python_exec"},
		{"testing", "run_tests", 0.9, "run_command"},
		{"docs", "read_file", 0.95, ""},
		{"analysis", "python_exec", 0.88, "grep"},
	}
	if len(tr.Types) != len(tests) {
		t.Fatalf("truth has %d types, want %d", len(tr.Types), len(tests))
	}
	for i, tt := range tests {
		got := tr.Types[i]
		avoid := strings.Join(got.Avoid, ",")
		if got.TaskType != tt.taskType || got.BestTool != tt.best || got.BestSuccess != tt.success || avoid != tt.avoid || got.Prefer != tt.best {
			t.Errorf("truth of %s = best %s %.2f, avoid %q, prefer %q; want best %s %.2f, avoid %q, prefer %s",
				got.TaskType, got.BestTool, got.BestSuccess, avoid, got.Prefer, tt.best, tt.success, tt.avoid, tt.best)
		}
		var sum float64
		for _, h := range got.Hints {
			sum += h.Probability
		}
		if sum+got.NoHint < 0.999 || sum+got.NoHint > 1.001 {
			t.Errorf("%s: hint probabilities sum to %v with no_hint, want 1", got.TaskType, sum+got.NoHint)
		}
	}
}

type failingSink struct{ after atomic.Int64 }

var errSink = errors.New("sink broke")

func (f *failingSink) Send(context.Context, *events.Event) error {
	if f.after.Add(-1) < 0 {
		return errSink
	}
	return nil
}

func TestRunStops(t *testing.T) {
	tests := []struct {
		name    string
		ordered bool
	}{{"interleaved", false}, {"ordered", true}}
	for _, tt := range tests {
		t.Run(tt.name+"/sink error", func(t *testing.T) {
			f := &failingSink{}
			f.after.Store(500)
			sum, err := Run(t.Context(), Config{Scenario: Default(), Sessions: 1000, Concurrency: 8, Ordered: tt.ordered}, f)
			if !errors.Is(err, errSink) {
				t.Fatalf("Run = %v, want the sink's error", err)
			}
			if sum.Sessions >= 1000 {
				t.Errorf("%d sessions ran after the sink failed", sum.Sessions)
			}
		})
		t.Run(tt.name+"/cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			d := &discard{}
			_, err := Run(ctx, Config{Scenario: Default(), Sessions: 1_000_000, Concurrency: 4, Ordered: tt.ordered,
				Progress: func(done int) {
					if done == 50 {
						cancel()
					}
				}}, d)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want context.Canceled", err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no scenario", Config{}, "no scenario"},
		{"negative sessions", Config{Scenario: Default(), Sessions: -1}, "sessions -1"},
		{"negative rate", Config{Scenario: Default(), Rate: -2}, "rate -2"},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// The pacer spaces events evenly at the rate, across senders.
func TestPacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &discard{}
		p := newPacer(d, 100)
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					if err := p.Send(t.Context(), &events.Event{ID: "x"}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		// 100 events at 100/s: the first goes at once, the last 0.99s later.
		if got, want := time.Since(start), 990*time.Millisecond; got != want {
			t.Errorf("100 events at 100/s took %s, want %s", got, want)
		}
		if d.n.Load() != 100 {
			t.Errorf("%d events passed, want 100", d.n.Load())
		}
		// Idle time earns no burst.
		time.Sleep(time.Second)
		start = time.Now()
		for range 3 {
			p.Send(t.Context(), &events.Event{ID: "x"})
		}
		if got, want := time.Since(start), 20*time.Millisecond; got != want {
			t.Errorf("3 events after a pause took %s, want %s", got, want)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p.Send(t.Context(), &events.Event{ID: "x"}) // takes the next slot
		if err := p.Send(ctx, &events.Event{ID: "x"}); !errors.Is(err, context.Canceled) {
			t.Errorf("Send with a cancelled context waiting for its slot = %v, want context.Canceled", err)
		}
	})
}

// unlabeled_tasks and unique_descriptions: plans carry no task_type, and no
// two sessions share a description.
func TestUnlabeledUniqueDescriptions(t *testing.T) {
	sc := Default()
	sc.Model.UnlabeledTasks, sc.Model.UniqueDescriptions = true, true
	out, _ := jsonl(t, Config{Scenario: sc, Seed: 3, Sessions: 40})
	owner := map[string]string{} // description → session
	plans := 0
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		e, err := events.Decode([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if e.Type != events.PlanCreated {
			continue
		}
		plans++
		var d struct {
			Tasks []map[string]any `json:"tasks"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		for _, task := range d.Tasks {
			if _, ok := task["task_type"]; ok {
				t.Fatalf("line %d: a task with a task_type: %v", i+1, task)
			}
			desc := task["description"].(string)
			if s, ok := owner[desc]; ok && s != e.Subject {
				t.Fatalf("description %q in sessions %s and %s", desc, s, e.Subject)
			}
			owner[desc] = e.Subject
		}
	}
	if plans < 40 || len(owner) < 80 {
		t.Fatalf("%d plans, %d descriptions: too few to tell", plans, len(owner))
	}
}

func TestSessionID(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	id := sessionID(1, 7, at)
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		t.Fatalf("sessionID = %q (%v): want a UUIDv7", id, err)
	}
	if sec, nsec := u.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != at.UnixMilli() {
		t.Errorf("sessionID time %v, want %v", time.Unix(sec, nsec), at)
	}
	if sessionID(1, 7, at) != id || sessionID(2, 7, at) == id || sessionID(1, 8, at) == id || sessionID(1, 7, at.Add(time.Hour)) == id {
		t.Error("sessionID is not a function of seed, n and start alone")
	}
}
