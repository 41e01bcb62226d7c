package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata is where the sample scenario files live.
const testdata = "../../../testdata/agentsim"

func TestDefaultScenario(t *testing.T) {
	sc := Default()
	if err := sc.Validate(); err != nil {
		t.Fatalf("default scenario: %v", err)
	}
	if got, want := sc.Fleet.Sessions, 400; got != want {
		t.Errorf("default fleet.sessions = %d, want %d (docs/agentsim.md says so)", got, want)
	}
	// DefaultJSON is a copy.
	b := DefaultJSON()
	b[0] = 'x'
	if DefaultJSON()[0] != '{' {
		t.Error("DefaultJSON shares its bytes with the embedded scenario")
	}
}

func TestSampleScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample scenarios in %s: %v", testdata, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("Load(%s): %v", f, err)
		}
	}
}

func TestParseAppliesDefaults(t *testing.T) {
	sc, err := Load(filepath.Join(testdata, "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"fleet.agents", sc.Fleet.Agents[0], "agentsim"},
		{"fleet.instances", sc.Fleet.Instances, 4},
		{"fleet.sessions", sc.Fleet.Sessions, 300},
		{"fleet.concurrency", sc.Fleet.Concurrency, 4},
		{"fleet.session_interval", time.Duration(sc.Fleet.SessionInterval), 2 * time.Second},
		{"model.name", sc.Model.Name, "sim-model"},
		{"model.max_attempts", sc.Model.MaxAttempts, 6},
		{"model.tasks_per_session", sc.Model.TasksPerSession, Range{2, 4}},
		{"tools[0].duration_ms", sc.Tools[0].DurationMS, Range{50, 3000}},
		{"success with *", sc.Success("search_web", "search"), 0.9},
		{"success listed", sc.Success("grep", "search"), 0.2},
		{"success of no tool", sc.Success("nope", "search"), 0.0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// valid is a scenario that parses; the cases below break it.
const valid = `{
  "name": "t",
  "model": {"follow_hint": 0.9, "replan": 0.5, "hallucinate": 0.1, "hallucinated_tools": ["ghost"]},
  "task_types": [{"name": "search", "weight": 1, "descriptions": ["Find it"], "hints": {"grep": 1}}],
  "tools": [{"name": "grep", "success": {"search": 0.5}}]
}`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // every one must be in the error
	}{
		{"empty", ``, []string{"empty file"}},
		{"not an object", `[1]`, []string{"line 1", "want sim.Scenario"}},
		{"syntax", "{\n\"name\": \"x\",\n}", []string{"line 3", "invalid character"}},
		{"unknown member", strings.Replace(valid, `"follow_hint"`, `"folow_hint"`, 1), []string{`unknown field "folow_hint"`}},
		{"wrong type", strings.Replace(valid, `"weight": 1`, `"weight": "heavy"`, 1), []string{"line 4", "task_types.weight", "want float64"}},
		{"trailing data", valid + `{}`, []string{"data after the scenario object"}},
		{"bad duration", strings.Replace(valid, `"name": "t",`, `"name": "t", "fleet": {"session_interval": "soon"},`, 1), []string{`duration "soon"`}},
		{"no tools, no types", `{"name": "t"}`, []string{"tools: none", "task_types: none"}},
		{"hint not a tool", strings.Replace(valid, `{"grep": 1}`, `{"gerp": 1}`, 1), []string{`task_types[0] (search).hints: "gerp" is not one of the tools`}},
		{"success of unknown type", strings.Replace(valid, `{"search": 0.5}`, `{"search": 0.5, "serach": 0.1}`, 1), []string{`tools[0] (grep).success: "serach" is not one of the task types`}},
		{"success missing", strings.Replace(valid, `{"search": 0.5}`, `{}`, 1), []string{`no probability for task type "search"`}},
		{"not a probability", strings.Replace(valid, `"follow_hint": 0.9`, `"follow_hint": 1.5`, 1), []string{"model.follow_hint: 1.5 is not a probability"}},
		{"hint mix over 1", strings.Replace(valid, `"hallucinate": 0.1`, `"hallucinate": 0.7, "no_hint": 0.5`, 1), []string{"more than 1"}},
		{"hallucinating nothing", strings.Replace(valid, `["ghost"]`, `[]`, 1), []string{"model.hallucinated_tools: none"}},
		{"hallucinating a real tool", strings.Replace(valid, `["ghost"]`, `["grep"]`, 1), []string{`hallucinated_tools[0]: "grep"`}},
		{"control tool", strings.Replace(valid, `"tools": [`, `"tools": [{"name": "complete_task", "success": {"*": 1}},`, 1), []string{"planner control tool"}},
		{"bad agent name", strings.Replace(valid, `"name": "t",`, `"name": "t", "fleet": {"agents": ["a.b", "global"]},`, 1), []string{`fleet.agents[0]: "a.b"`, `"global" is the key of the global rules`}},
		{"bad range", strings.Replace(valid, `"replan": 0.5`, `"replan": 0.5, "tasks_per_session": [3, 2]`, 1), []string{"model.tasks_per_session: [3, 2]"}},
		{"object without objects", strings.Replace(valid, `"Find it"`, `"Find {object}"`, 1), []string{"uses {object} but the scenario has no objects"}},
		{"zero weight", strings.Replace(valid, `"weight": 1`, `"weight": 0`, 1), []string{"weight: 0, want a number above 0"}},
		{"several at once", strings.Replace(strings.Replace(valid, `{"grep": 1}`, `{"gerp": 1}`, 1), `"follow_hint": 0.9`, `"follow_hint": -1`, 1), []string{"gerp", "follow_hint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%s) = nil error, want %q", tt.name, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse(%s) = %v\nwant it to contain %q", tt.name, err, w)
				}
			}
		})
	}
	if _, err := Parse([]byte(valid)); err != nil {
		t.Fatalf("Parse(valid) = %v", err)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load(%s) = %v, want an error naming the file", path, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load(missing) = nil error")
	}
}

// FuzzParse: Parse never panics, and what it accepts validates and runs.
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add(DefaultJSON())
	files, _ := filepath.Glob(filepath.Join(testdata, "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := Parse(b)
		if err != nil {
			return
		}
		if err := sc.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario that does not validate: %v", err)
		}
		_ = sc.Truth()
		if _, err := Run(t.Context(), Config{Scenario: sc, Sessions: 2, Concurrency: 1}, &discard{}); err != nil {
			t.Fatalf("Run on a parsed scenario: %v", err)
		}
	})
}
