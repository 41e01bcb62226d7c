package realcli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
)

// Kind is what a scripted call is, for the truth an adapter must find.
type Kind int

const (
	// Plan is a call of the agent's plan tool (TaskCreate, TaskUpdate,
	// update_plan).
	Plan Kind = iota
	// Real is a call that does the work: a shell command, a file read or
	// written.
	Real
	// Control is a call that is neither: Claude Code's ToolSearch, which
	// loads the deferred task tools.
	Control
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Plan:
		return "plan"
	case Real:
		return "real"
	case Control:
		return "control"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// CallTruth is one scripted call and what it is.
type CallTruth struct {
	// Step is the index of the step that makes the call; Prompt the
	// index of the prompt the step answers.
	Step, Prompt int
	ID, Name     string
	Kind         Kind
	// Fails is true for a real call the script makes fail (a command
	// that exits non-zero).
	Fails bool
}

// Truth is what a scenario makes certain, counted by hand from its steps
// (testdata/realcli/README.md shows the count): what an adapter reading
// the CLI's files must find.
type Truth struct {
	// Requests is the number of user requests, each the agent's work on
	// one until it stops: a prompt begins one, and so does, within a
	// prompt, a fresh plan written after every task of the plan in force
	// was completed (the agent's next request).
	Requests int
	// Plans is the number of plans created: a request's first plan.
	Plans int
	// Replans is the number of changes of course: after a real call, a
	// burst of plan calls that adds a task or rewrites a pending one
	// (one replan however many calls the burst has).
	Replans int
	// RealCalls and FailedCalls count the Real calls and those of them
	// that fail.
	RealCalls, FailedCalls int
	// Completions is the number of tasks the agent marks completed.
	Completions int
}

// Scenario is a scripted piece of work for one CLI: its prompts, in
// order, the model's steps that answer them (a prompt's steps end with one
// without calls), every call with its kind, and the truth.
type Scenario struct {
	Prompts []string
	// FirstStep[i] is the index in Steps of the first step of prompt i.
	FirstStep []int
	Steps     []fakemodel.Step
	Calls     []CallTruth
	Truth     Truth
}

// scenarioBuilder writes a scenario step by step, naming each call
// <prefix>_<step>_<n> (Claude Code wants tool_use ids of letters, digits,
// _ and -).
type scenarioBuilder struct {
	sc     Scenario
	prefix string
}

// call is one call of a step being written.
type call struct {
	name  string
	input any
	kind  Kind
	fails bool
}

func planCall(name string, input any) call { return call{name: name, input: input, kind: Plan} }
func realCall(name string, input any) call { return call{name: name, input: input, kind: Real} }
func failing(name string, input any) call {
	return call{name: name, input: input, kind: Real, fails: true}
}
func controlCall(name string, input any) call { return call{name: name, input: input, kind: Control} }

func (b *scenarioBuilder) prompt(p string) {
	b.sc.Prompts = append(b.sc.Prompts, p)
	b.sc.FirstStep = append(b.sc.FirstStep, len(b.sc.Steps))
}

func (b *scenarioBuilder) step(text string, calls ...call) {
	n := len(b.sc.Steps)
	step := fakemodel.Step{Text: text}
	for i, c := range calls {
		id := fmt.Sprintf("%s_%02d_%d", b.prefix, n, i)
		step.Calls = append(step.Calls, fakemodel.Call{ID: id, Name: c.name, Input: c.input})
		b.sc.Calls = append(b.sc.Calls, CallTruth{Step: n, Prompt: len(b.sc.Prompts) - 1, ID: id, Name: c.name, Kind: c.kind, Fails: c.fails})
	}
	b.sc.Steps = append(b.sc.Steps, step)
}

// ClaudeCodeScenario is the work Claude Code is scripted to do in
// workspace (its file tools take absolute paths): two requests, the first
// planned with TaskCreate ×3, worked through with TaskUpdate, replanned
// after a failed command (a task created, a pending one renamed, in one
// burst), and completed; the second planned afresh on the resumed session.
func ClaudeCodeScenario(workspace string) Scenario {
	b := scenarioBuilder{prefix: "toolu_fake"}
	task := func(subject, description, active string) call {
		return planCall("TaskCreate", map[string]any{"subject": subject, "description": description, "activeForm": active})
	}
	status := func(id, s string) call {
		return planCall("TaskUpdate", map[string]any{"taskId": id, "status": s})
	}
	bash := func(command, description string) map[string]any {
		return map[string]any{"command": command, "description": description}
	}
	notes, config := filepath.Join(workspace, "notes.txt"), filepath.Join(workspace, "config.txt")

	b.prompt("Write notes.txt, read the config and count the files.")
	b.step("", controlCall("ToolSearch", map[string]any{"query": "select:TaskCreate,TaskUpdate"}))
	b.step("I'll plan this first.", task("Write notes.txt", "Write a greeting into notes.txt", "Writing notes.txt"))
	b.step("", task("Read the config", "Read config.txt", "Reading the config"))
	b.step("", task("Count the files", "Count the files in the workspace", "Counting the files"))
	b.step("", status("1", "in_progress"))
	b.step("", realCall("Bash", bash(`printf 'hello\n' > notes.txt && cat notes.txt`, "Write notes.txt")))
	b.step("", status("1", "completed"), status("2", "in_progress"))
	b.step("", failing("Bash", bash("cat config.txt", "Read the config")))
	b.step("There is no config.txt; I'll create it first.",
		task("Create config.txt", "Write a default config.txt", "Creating config.txt"),
		planCall("TaskUpdate", map[string]any{"taskId": "3", "subject": "Count the files, config included"}))
	b.step("", realCall("Write", map[string]any{"file_path": config, "content": "mode=default\n"}))
	b.step("", status("4", "completed"), status("2", "completed"), status("3", "in_progress"))
	b.step("", realCall("Bash", bash("ls | wc -l", "Count the files")))
	b.step("", status("3", "completed"))
	b.step("Done: notes.txt and config.txt are written; the workspace has 2 files.")

	b.prompt("Now add a farewell to notes.txt.")
	b.step("", task("Add a farewell to notes.txt", "Append a farewell line to notes.txt", "Adding a farewell"))
	b.step("", status("5", "in_progress"))
	b.step("", realCall("Read", map[string]any{"file_path": notes}))
	b.step("", realCall("Edit", map[string]any{"file_path": notes, "old_string": "hello", "new_string": "hello\nbye"}))
	b.step("", status("5", "completed"))
	b.step("Added the farewell.")

	b.sc.Truth = Truth{Requests: 2, Plans: 2, Replans: 1, RealCalls: 6, FailedCalls: 1, Completions: 5}
	return b.sc
}

// ClaudeCodeOneRunScenario is ClaudeCodeScenario's two requests given to
// one run (Converse: the prompts one after the other on stdin), and a
// third prompt in which the agent completes every task of its plan, runs a
// command, and then writes a fresh list: the plan of a fourth request,
// begun within the third prompt. Its calls are named as
// ClaudeCodeScenario's, the third prompt's after them.
func ClaudeCodeOneRunScenario(workspace string) Scenario {
	b := scenarioBuilder{sc: ClaudeCodeScenario(workspace), prefix: "toolu_fake"}
	summary := filepath.Join(workspace, "summary.txt")

	b.prompt("Remove config.txt, then write a summary of the workspace into summary.txt.")
	b.step("", planCall("TaskCreate", map[string]any{"subject": "Remove config.txt", "description": "Delete config.txt", "activeForm": "Removing config.txt"}))
	b.step("", planCall("TaskUpdate", map[string]any{"taskId": "6", "status": "in_progress"}))
	b.step("", realCall("Bash", map[string]any{"command": "rm config.txt", "description": "Remove config.txt"}))
	b.step("", planCall("TaskUpdate", map[string]any{"taskId": "6", "status": "completed"}))
	b.step("", realCall("Bash", map[string]any{"command": "ls", "description": "List the files left"}))
	b.step("Every task is done; now the summary.",
		planCall("TaskCreate", map[string]any{"subject": "Write summary.txt", "description": "Summarise the workspace in summary.txt", "activeForm": "Writing summary.txt"}),
		planCall("TaskCreate", map[string]any{"subject": "Check summary.txt", "description": "Read summary.txt back", "activeForm": "Checking summary.txt"}))
	b.step("", planCall("TaskUpdate", map[string]any{"taskId": "7", "status": "in_progress"}))
	b.step("", realCall("Write", map[string]any{"file_path": summary, "content": "notes.txt: a greeting and a farewell\n"}))
	b.step("", planCall("TaskUpdate", map[string]any{"taskId": "7", "status": "completed"}), planCall("TaskUpdate", map[string]any{"taskId": "8", "status": "in_progress"}))
	b.step("", realCall("Bash", map[string]any{"command": "cat summary.txt", "description": "Check summary.txt"}))
	b.step("", planCall("TaskUpdate", map[string]any{"taskId": "8", "status": "completed"}))
	b.step("Removed config.txt and wrote summary.txt.")

	b.sc.Truth = Truth{Requests: 4, Plans: 4, Replans: 1, RealCalls: 10, FailedCalls: 1, Completions: 8}
	return b.sc
}

// CodexScenario is the work Codex is scripted to do: the same two
// requests as ClaudeCodeScenario's, planned with update_plan (the whole
// list at every call) and worked with exec_command.
func CodexScenario() Scenario {
	b := scenarioBuilder{prefix: "call_fake"}
	type item struct{ step, status string }
	plan := func(explanation string, items ...item) call {
		var steps []map[string]any
		for _, it := range items {
			steps = append(steps, map[string]any{"step": it.step, "status": it.status})
		}
		in := map[string]any{"plan": steps}
		if explanation != "" {
			in["explanation"] = explanation
		}
		return planCall("update_plan", in)
	}
	sh := func(cmd string) map[string]any { return map[string]any{"cmd": cmd} }
	const (
		notes, read, count, create = "Write notes.txt", "Read the config", "Count the files", "Create config.txt"
		count2, farewell           = "Count the files, config included", "Add a farewell to notes.txt"
	)

	b.prompt("Write notes.txt, read the config and count the files.")
	b.step("I'll plan this first.", plan("", item{notes, "in_progress"}, item{read, "pending"}, item{count, "pending"}))
	b.step("", realCall("exec_command", sh(`printf 'hello\n' > notes.txt && cat notes.txt`)))
	b.step("", plan("", item{notes, "completed"}, item{read, "in_progress"}, item{count, "pending"}))
	b.step("", failing("exec_command", sh("cat config.txt")))
	b.step("There is no config.txt; I'll create it first.",
		plan("config.txt is missing", item{notes, "completed"}, item{create, "in_progress"}, item{read, "pending"}, item{count2, "pending"}))
	b.step("", realCall("exec_command", sh(`printf 'mode=default\n' > config.txt`)))
	b.step("", realCall("exec_command", sh("cat config.txt")))
	b.step("", plan("", item{notes, "completed"}, item{create, "completed"}, item{read, "completed"}, item{count2, "in_progress"}))
	b.step("", realCall("exec_command", sh("ls | wc -l")))
	b.step("", plan("", item{notes, "completed"}, item{create, "completed"}, item{read, "completed"}, item{count2, "completed"}))
	b.step("Done: notes.txt and config.txt are written; the workspace has 2 files.")

	b.prompt("Now add a farewell to notes.txt.")
	b.step("", plan("", item{farewell, "in_progress"}))
	b.step("", realCall("exec_command", sh("printf 'bye\\n' >> notes.txt && cat notes.txt")))
	b.step("", plan("", item{farewell, "completed"}))
	b.step("Added the farewell.")

	b.sc.Truth = Truth{Requests: 2, Plans: 2, Replans: 1, RealCalls: 6, FailedCalls: 1, Completions: 5}
	return b.sc
}

// CodexCodeModeModel is a model Codex 0.171.0 knows (its default) and runs
// in code mode: instead of function tools it offers one custom tool,
// exec, whose input is JavaScript that calls the tools
// (tools.update_plan, tools.exec_command, ...).
const CodexCodeModeModel = "gpt-6.2-sol"

// CodexCodeModeScenario is CodexScenario as a model in code mode does it:
// the calls of each step are one exec call, JavaScript that makes them in
// order and returns their results. Calls lists, per step, the exec call
// (Control) and then the calls it makes, with no ID: Codex names those
// itself (exec-<uuid>). The truth is CodexScenario's.
func CodexCodeModeScenario() Scenario {
	fc := CodexScenario()
	sc := Scenario{Prompts: fc.Prompts, FirstStep: fc.FirstStep, Truth: fc.Truth}
	for n, step := range fc.Steps {
		if len(step.Calls) == 0 {
			sc.Steps = append(sc.Steps, step)
			continue
		}
		var js strings.Builder
		for _, c := range step.Calls {
			in, err := json.Marshal(c.Input)
			if err != nil {
				panic(fmt.Sprintf("realcli: encode the input of %s: %v", c.Name, err)) // the inputs are this file's literals
			}
			fmt.Fprintf(&js, "text(await tools.%s(%s));\n", c.Name, in)
		}
		id := fmt.Sprintf("call_fake_%02d_exec", n)
		sc.Steps = append(sc.Steps, fakemodel.Step{Text: step.Text, Calls: []fakemodel.Call{{ID: id, Name: "exec", Input: js.String(), Custom: true}}})
		prompt := fc.Calls[0].Prompt
		for _, c := range fc.Calls {
			if c.Step == n {
				prompt = c.Prompt
			}
		}
		sc.Calls = append(sc.Calls, CallTruth{Step: n, Prompt: prompt, ID: id, Name: "exec", Kind: Control})
		for _, c := range fc.Calls {
			if c.Step == n {
				c.ID = ""
				sc.Calls = append(sc.Calls, c)
			}
		}
	}
	return sc
}

// CallsOf returns the calls of the scenario of kind k.
func (sc Scenario) CallsOf(k Kind) []CallTruth {
	var out []CallTruth
	for _, c := range sc.Calls {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}

// TruthOf counts in evs, events an adapter made of a CLI's files, what
// Truth counts: requests (session starts), plans, replans, completions,
// real calls (not control calls) and the failed ones.
func TruthOf(evs []*events.Event) (Truth, error) {
	var got Truth
	for _, e := range evs {
		switch e.Type {
		case events.SessionStarted:
			got.Requests++
		case events.PlanCreated:
			got.Plans++
		case events.PlanUpdated:
			got.Replans++
		case events.TaskCompleted:
			got.Completions++
		case events.ToolCalled:
			var d events.ToolCalledData
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return Truth{}, fmt.Errorf("event %s: %w", e.ID, err)
			}
			if !d.Control {
				got.RealCalls++
				if !d.OK {
					got.FailedCalls++
				}
			}
		}
	}
	return got, nil
}
