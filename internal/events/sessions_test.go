package events

import (
	"bytes"
	"crypto/sha256"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/golden"
	"github.com/google/uuid"
)

// The sample sessions in testdata/events/valid are generated from the
// scripts below so that their counts agree by construction (session.ended
// replans = plan.updated events, tool_calls = tool.called events, and so
// on). Change a script and run
//
//	go test ./internal/events -run TestSampleSessions -update
//
// then review the diff. Conventions the scripts follow (and
// TestSessionInvariants checks for every file in valid/):
//   - every update_task_plan call emits agent.plan.updated, then any
//     agent.hint.stripped (phase replan), then its agent.tool.called
//     (control, task_id null, ok = valid);
//   - agent.hint.stripped (phase plan) follows agent.plan.created, whose
//     task already shows tool_hint null (or a replace rule's hint);
//   - completing a task is a complete_task control call followed by
//     agent.task.completed, whose tool_calls counts the task's
//     agent.tool.called events including that call;
//   - the soft replan cap is 3: over_cap is true from ordinal 3 on;
//   - iterations = tool calls + 1 (one model turn per call, plus the
//     answer).
var sessions = []struct {
	file   string
	script func(w *sessionWriter)
}{
	{"skilllite_success_no_replan.jsonl", successNoReplan},
	{"skilllite_one_replan.jsonl", oneReplan},
	{"coder_several_replans.jsonl", severalReplans},
	{"skilllite_over_cap.jsonl", overCap},
	{"skilllite_invalid_replan.jsonl", invalidReplan},
	{"skilllite_hints_stripped.jsonl", hintsStripped},
	{"coder_rules_applied.jsonl", rulesApplied},
	{"skilllite_fallback_plan.jsonl", fallbackPlan},
	{"skilllite_empty_plan.jsonl", emptyPlan},
	{"coder_depth_limit.jsonl", depthLimit},
	{"skilllite_failed.jsonl", failedSession},
	{"coder_aborted.jsonl", abortedSession},
	{"skilllite_timeout.jsonl", timeoutSession},
	{"skilllite_never_ends.jsonl", neverEnds},
	{"coder_model_calls.jsonl", modelCalls},
}

var skillliteTools = []string{"read_file", "write_file", "run_command", "search_web", "grep", "http_request", "complete_task", "update_task_plan"}
var coderTools = []string{"read_file", "write_file", "run_command", "grep", "complete_task", "update_task_plan"}

func successNoReplan(w *sessionWriter) {
	w.begin("skilllite/host-a/worker-3", "sess-7c1e02d4", "2025-06-12T09:14:03.120Z")
	w.started(SessionStartedData{Goal: "Summarize the open issues labelled bug into ISSUES.md", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "List open issues labelled bug", "http_request"),
		task(2, "Summarize each issue in one line", ""),
		task(3, "Write ISSUES.md", "write_file"))
	w.ok(1, "http_request", 412)
	w.complete(1, CompletionSuccess, CompletionSuccess, "Found 7 open bugs")
	w.complete(2, CompletionSuccess, CompletionSuccess, "")
	w.ok(3, "write_file", 9)
	w.complete(3, CompletionSuccess, CompletionSuccess, "ISSUES.md written")
	w.ended(OutcomeSuccess, FeedbackPos)
}

func oneReplan(w *sessionWriter) {
	w.begin("skilllite/host-a/worker-3", "sess-9a40b7e1", "2025-06-12T10:02:47.503Z")
	w.started(SessionStartedData{Goal: "Find the cause of the flaky TestUpload test and fix it", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "Run TestUpload five times", "run_command"),
		task(2, "Read the upload handler", "read_file"),
		task(3, "Patch the race in the handler", "write_file"))
	w.ok(1, "run_command", 18230)
	w.complete(1, CompletionSuccess, CompletionSuccess, "Failed 2 of 5 runs")
	w.ok(2, "read_file", 6)
	w.ok(2, "grep", 41)
	w.complete(2, CompletionSuccess, CompletionSuccess, "")
	w.replan(TriggerModel, "The race is in the retry helper, not in the handler", []int64{1, 2},
		task(4, "Read the retry helper", "read_file"),
		task(5, "Guard the retry state with a mutex", "write_file"),
		task(6, "Run TestUpload five times again", "run_command"))
	w.ok(4, "read_file", 5)
	w.complete(4, CompletionSuccess, "", "")
	w.ok(5, "write_file", 11)
	w.complete(5, CompletionSuccess, CompletionSuccess, "")
	w.ok(6, "run_command", 17904)
	w.complete(6, CompletionSuccess, CompletionSuccess, "5 of 5 runs passed")
	w.ended(OutcomeSuccess, "")
}

func severalReplans(w *sessionWriter) {
	w.begin("coder/ci-runner-7", "ci-48213-go126", "2025-06-12T11:30:00.004Z")
	w.started(SessionStartedData{Goal: "Upgrade the project to Go 1.26 and fix the build", Agent: "coder", AgentVersion: "2.3.0", Model: "gpt-4.1-mini", Tools: coderTools})
	w.plan(OriginModel, "",
		task(1, "Bump the go directive in go.mod", "write_file"),
		task(2, "Run go build ./...", "run_command"),
		task(3, "Fix compile errors", "write_file"))
	w.ok(1, "write_file", 7)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.fail(2, "run_command", 5120, "exit_status", "exit status 1: golang.org/x/exp@v0.0.0-2023: undefined: constraints.Ordered")
	w.fail(2, "run_command", 4987, "exit_status", "exit status 1: golang.org/x/exp@v0.0.0-2023: undefined: constraints.Ordered")
	w.replan(TriggerToolFailures, "The build fails in a dependency", []int64{1},
		task(4, "Update golang.org/x/exp", "run_command"),
		task(2, "Run go build ./...", "run_command"),
		task(3, "Fix compile errors", "write_file"))
	w.ok(4, "run_command", 2311)
	w.complete(4, CompletionSuccess, CompletionSuccess, "")
	w.fail(2, "run_command", 5403, "exit_status", "exit status 1: vendor/modules.txt is out of sync")
	w.replan(TriggerModel, "The vendor directory is stale", []int64{1, 4},
		task(5, "Re-vendor the dependencies", "run_command"),
		task(2, "Run go build ./...", "run_command"),
		task(3, "Fix compile errors", "write_file"))
	w.ok(5, "run_command", 3890)
	w.complete(5, CompletionSuccess, CompletionSuccess, "")
	w.ok(2, "run_command", 6120)
	w.complete(2, CompletionSuccess, CompletionSuccess, "Build is clean")
	w.complete(3, CompletionSuccess, CompletionPartialSuccess, "Nothing left to fix")
	w.ended(OutcomeSuccess, "")
}

func overCap(w *sessionWriter) {
	w.begin("skilllite/host-b/worker-1", "sess-3f5d88a0", "2025-06-12T13:45:10.250Z")
	w.started(SessionStartedData{Goal: "Compare the pricing pages of three competitors in a table", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "Find the pricing page URLs", "search_web"),
		task(2, "Fetch the three pricing pages", "http_request"),
		task(3, "Write pricing.md with the comparison table", "write_file"))
	w.ok(1, "search_web", 1730)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.fail(2, "http_request", 388, "http_status", "403 Forbidden")
	w.fail(2, "http_request", 402, "http_status", "403 Forbidden")
	w.replan(TriggerToolFailures, "Pages block the HTTP client", []int64{1},
		task(4, "Fetch cached copies of the pages", "search_web"),
		task(3, "Write pricing.md with the comparison table", "write_file"))
	w.ok(4, "search_web", 2104)
	w.replan(TriggerModel, "Cached copies lack the enterprise tier", []int64{1, 4, 3},
		task(5, "Fetch the enterprise tier from the vendors' docs", "http_request"))
	w.fail(5, "http_request", 5011, "timeout", "context deadline exceeded")
	w.replan(TriggerNoProgress, "No new data for three calls", []int64{1, 4, 3},
		task(6, "Use the public list prices only", ""))
	w.complete(4, CompletionPartialSuccess, CompletionSuccess, "Two of three pages cached")
	w.replan(TriggerModel, "Reorder: write the table first", []int64{1, 4, 3, 6})
	w.ok(3, "write_file", 12)
	w.complete(3, CompletionSuccess, CompletionSuccess, "")
	w.replan(TriggerUser, "User: add a column for the free tier", []int64{1, 4, 3},
		task(7, "Add a free-tier column", "write_file"))
	w.ok(7, "write_file", 10)
	w.complete(7, CompletionSuccess, CompletionSuccess, "")
	w.ended(OutcomePartialSuccess, FeedbackNeutral)
}

func invalidReplan(w *sessionWriter) {
	w.begin("skilllite/host-a/worker-3", "sess-b2e61c09", "2025-06-12T15:20:31.877Z")
	w.started(SessionStartedData{Goal: "Rename the config key log_level to log.level everywhere", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "Find every use of log_level", "grep"),
		task(2, "Rewrite the uses", "write_file"),
		task(3, "Run the tests", "run_command"))
	w.ok(1, "grep", 37)
	w.complete(1, CompletionSuccess, CompletionSuccess, "14 uses in 6 files")
	w.invalidReplan(TriggerModel, "Split the rewrite per file", "task id 2 appears twice")
	w.replan(TriggerModel, "Split the rewrite: code and docs", []int64{1},
		task(4, "Rewrite the uses in code", "write_file"),
		task(5, "Rewrite the uses in docs", "write_file"),
		task(3, "Run the tests", "run_command"))
	w.ok(4, "write_file", 15)
	w.ok(4, "write_file", 13)
	w.complete(4, CompletionSuccess, CompletionSuccess, "")
	w.ok(5, "write_file", 9)
	w.complete(5, CompletionSuccess, CompletionSuccess, "")
	w.ok(3, "run_command", 9034)
	w.complete(3, CompletionSuccess, CompletionSuccess, "")
	w.ended(OutcomeSuccess, FeedbackPos)
}

func hintsStripped(w *sessionWriter) {
	w.begin("skilllite/host-b/worker-1", "sess-e04f1a6b", "2025-06-13T08:05:12.000Z")
	w.started(SessionStartedData{Goal: "Turn the meeting notes in notes.pdf into action items in TODO.md", Agent: "skilllite", AgentVersion: "0.9.4", Model: "llama-3.3-70b", Tools: []string{"read_file", "write_file", "pdf_extract", "grep", "complete_task", "update_task_plan"}})
	w.plan(OriginModel, "",
		task(1, "Extract the text of notes.pdf", ""),
		task(2, "Find the action items", ""),
		task(3, "Write TODO.md", "write_file"))
	w.strip(1, "pdf_to_text", PhasePlan, StripUnavailable, "")
	w.strip(2, "nlp_extract", PhasePlan, StripUnavailable, "")
	w.ok(1, "pdf_extract", 1420)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.ok(2, "grep", 22)
	w.complete(2, CompletionSuccess, CompletionSuccess, "9 action items")
	w.replanStripping(TriggerModel, "Group the items by owner first", []int64{1, 2},
		[]stripped{{4, "spreadsheet"}},
		task(4, "Group the action items by owner", ""),
		task(3, "Write TODO.md", "write_file"))
	w.complete(4, CompletionSuccess, CompletionSuccess, "")
	w.ok(3, "write_file", 8)
	w.complete(3, CompletionSuccess, CompletionSuccess, "")
	w.ended(OutcomeSuccess, FeedbackPos)
}

func rulesApplied(w *sessionWriter) {
	w.begin("coder/laptop-jane", "c0d3r-2025-06-13-0042", "2025-06-13T09:41:55.310Z")
	w.started(SessionStartedData{Goal: "Replace OldClient with Client across the repository", Agent: "coder", AgentVersion: "2.3.0", Model: "gpt-4.1-mini",
		Tools: append(slices.Clone(coderTools), "search_web"), TaskType: "refactor", Ruleset: "2025-06-10.2", Rules: []string{"r-017", "r-023"},
		// v1.4: the rules arm of the set's 10% holdout, with r-017 and r-028
		// held out on their own at 20%: r-017 applies, r-028 is held out
		// (the arms ruleset.Assign and AssignRule give this session id).
		Assignment: &Assignment{Ruleset: "2025-06-10.2", Arm: ArmRules, Holdout: 0.1, Unit: UnitSession, UnitID: "c0d3r-2025-06-13-0042",
			Rules: []RuleArm{{ID: "r-017", Arm: ArmRules, Holdout: 0.2}, {ID: "r-028", Arm: ArmHoldout, Holdout: 0.2}}}})
	w.plan(OriginModel, "",
		typed(task(1, "Find all callers of OldClient", "grep"), "search"),
		typed(task(2, "Replace OldClient with Client", ""), "edit"),
		typed(task(3, "Run go test ./...", "run_command"), "test"))
	w.strip(2, "search_web", PhasePlan, StripRule, "r-017")
	w.ok(1, "grep", 29)
	w.complete(1, CompletionSuccess, CompletionSuccess, "23 callers")
	w.ok(2, "read_file", 4)
	w.ok(2, "write_file", 14)
	w.ok(2, "write_file", 12)
	w.complete(2, CompletionSuccess, CompletionSuccess, "")
	w.ok(3, "run_command", 21377)
	w.complete(3, CompletionSuccess, CompletionSuccess, "ok, 142 tests")
	w.ended(OutcomeSuccess, FeedbackPos)
}

func fallbackPlan(w *sessionWriter) {
	w.begin("skilllite/host-a/worker-3", "sess-41d9c3f2", "2025-06-13T11:12:08.640Z")
	w.started(SessionStartedData{Goal: "Tell me which services in docker-compose.yml expose port 5432", Agent: "skilllite", AgentVersion: "0.9.4", Model: "phi-4-mini", Tools: skillliteTools})
	w.plan(OriginFallback, "expected a JSON array of tasks, got text at line 1 column 1",
		task(1, "Tell me which services in docker-compose.yml expose port 5432", ""))
	w.ok(1, "read_file", 3)
	w.ok(1, "grep", 18)
	w.complete(1, CompletionSuccess, "", "db and db-replica")
	w.ended(OutcomeSuccess, "")
}

func emptyPlan(w *sessionWriter) {
	w.begin("skilllite/host-b/worker-1", "sess-0b8e5a71", "2025-06-13T12:00:41.002Z")
	w.started(SessionStartedData{Goal: "What does HTTP status 418 mean?", Agent: "skilllite", AgentVersion: "0.9.4", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginEmpty, "")
	w.ended(OutcomeSuccess, "")
}

func depthLimit(w *sessionWriter) {
	w.begin("coder/ci-runner-7", "ci-48377-staging", "2025-06-13T14:03:27.415Z")
	w.started(SessionStartedData{Goal: "Make the integration tests pass against the staging API", Agent: "coder", AgentVersion: "2.3.0", Model: "gpt-4.1-mini", Tools: coderTools})
	w.plan(OriginModel, "",
		task(1, "Run the integration tests", "run_command"),
		task(2, "Fix the failing API client calls", "write_file"))
	w.ok(1, "run_command", 30512)
	w.complete(1, CompletionSuccess, CompletionSuccess, "4 failures")
	w.ok(2, "read_file", 5)
	w.fail(2, "run_command", 12044, "exit_status", "exit status 1: dial tcp 10.2.0.14:443: i/o timeout")
	w.ok(2, "write_file", 17)
	w.fail(2, "run_command", 12016, "exit_status", "exit status 1: dial tcp 10.2.0.14:443: i/o timeout")
	w.fail(2, "run_command", 12031, "exit_status", "exit status 1: dial tcp 10.2.0.14:443: i/o timeout")
	w.fail(2, "run_command", 12009, "exit_status", "exit status 1: dial tcp 10.2.0.14:443: i/o timeout")
	w.depthLimit(2, 6)
	w.replan(TriggerDepthLimit, "Task 2 used its 6 tool calls", []int64{1},
		task(3, "Mock the staging API in the tests", "write_file"),
		task(4, "Run the integration tests again", "run_command"))
	w.ok(3, "write_file", 22)
	w.complete(3, CompletionSuccess, CompletionSuccess, "")
	w.fail(4, "run_command", 29877, "exit_status", "exit status 1: 2 tests failed")
	w.complete(4, CompletionPartialSuccess, CompletionSuccess, "2 tests still fail")
	w.ended(OutcomePartialSuccess, FeedbackNeg)
}

func failedSession(w *sessionWriter) {
	w.begin("skilllite/host-a/worker-3", "sess-d6a17e35", "2025-06-13T16:44:02.991Z")
	w.started(SessionStartedData{Goal: "Deploy the docs site to production", Agent: "skilllite", AgentVersion: "0.9.5", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "Build the docs", "run_command"),
		task(2, "Upload the site to the bucket", "run_command"))
	w.ok(1, "run_command", 8120)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.fail(2, "run_command", 1304, "permission_denied", "AccessDenied: not authorized to perform s3:PutObject")
	w.fail(2, "run_command", 1288, "permission_denied", "AccessDenied: not authorized to perform s3:PutObject")
	w.fail(2, "run_command", 1299, "permission_denied", "AccessDenied: not authorized to perform s3:PutObject")
	w.replan(TriggerToolFailures, "Upload keeps failing with AccessDenied", []int64{1, 2},
		task(3, "Check which credentials are in use", "run_command"))
	w.fail(3, "run_command", 907, "exit_status", "exit status 255: Unable to locate credentials")
	w.complete(2, CompletionFailure, CompletionFailure, "No permission to upload")
	w.complete(3, CompletionFailure, "", "")
	w.ended(OutcomeFailure, FeedbackNeg)
}

func abortedSession(w *sessionWriter) {
	w.begin("coder/laptop-jane", "c0d3r-2025-06-14-0007", "2025-06-14T10:15:00.000Z")
	w.started(SessionStartedData{Goal: "Rewrite the CLI argument parsing with cobra", Agent: "coder", AgentVersion: "2.3.1", Model: "gpt-4.1-mini", Tools: coderTools})
	w.plan(OriginModel, "",
		task(1, "Add the cobra dependency", "run_command"),
		task(2, "Move each subcommand to a cobra.Command", "write_file"),
		task(3, "Delete the old flag parsing", "write_file"),
		task(4, "Run the tests", "run_command"))
	w.ok(1, "run_command", 2204)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.ok(2, "read_file", 6)
	w.replan(TriggerUser, "User: keep the standard flag package", []int64{1},
		task(5, "Revert the cobra dependency", "run_command"))
	w.ok(5, "run_command", 1980)
	w.ended(OutcomeAborted, FeedbackNeg)
}

func timeoutSession(w *sessionWriter) {
	w.begin("skilllite/host-b/worker-1", "sess-72c0f9e8", "2025-06-14T13:30:45.120Z")
	w.started(SessionStartedData{Goal: "Crawl the changelog of every dependency and list breaking changes", Agent: "skilllite", AgentVersion: "0.9.5", Model: "llama-3.3-70b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "List the dependencies", "read_file"),
		task(2, "Fetch each changelog", "http_request"),
		task(3, "Write BREAKING.md", "write_file"))
	w.ok(1, "read_file", 4)
	w.complete(1, CompletionSuccess, CompletionSuccess, "61 dependencies")
	w.ok(2, "http_request", 48210)
	w.fail(2, "http_request", 60000, "timeout", "context deadline exceeded")
	w.ok(2, "http_request", 51399)
	w.ended(OutcomeTimeout, "")
}

func neverEnds(w *sessionWriter) {
	w.begin("skilllite/host-b/worker-1", "sess-5e9b2d14", "2025-06-14T17:58:19.455Z")
	w.started(SessionStartedData{Goal: "Refactor utils.py into smaller modules", Agent: "skilllite", AgentVersion: "0.9.5", Model: "qwen2.5-coder-32b", Tools: skillliteTools})
	w.plan(OriginModel, "",
		task(1, "Read utils.py", "read_file"),
		task(2, "Split it into modules", "write_file"),
		task(3, "Run the tests", "run_command"))
	w.ok(1, "read_file", 7)
	w.complete(1, CompletionSuccess, CompletionSuccess, "")
	w.ok(2, "write_file", 16)
	// The agent process died here: no agent.session.ended.
}

// modelCalls (v1.3, and v1.4's assignment) reports each model call (agent.model.called) before the
// plan, the calls and the replan it decided, with its tokens; the tool calls
// carry args_digest, and the same failing call is repeated once.
func modelCalls(w *sessionWriter) {
	w.begin("coder/ci-runner-2", "ci-50117-lint", "2025-06-13T08:12:40.511Z")
	// v1.4: the session fell in the holdout arm of rule set rs-5a3b1e000001
	// (agent/ruleset.Assign of that version, this session id and 0.5): it
	// loaded no rules.
	w.started(SessionStartedData{Goal: "Make golangci-lint pass", Agent: "coder", AgentVersion: "2.4.0", Model: "gpt-4.1-mini", Tools: coderTools,
		Assignment: &Assignment{Ruleset: "rs-5a3b1e000001", Arm: ArmHoldout, Holdout: 0.5, Unit: UnitSession, UnitID: "ci-50117-lint"}})
	w.model(0, 1850, 212, 0, 1412)
	w.plan(OriginModel, "",
		task(1, "Run golangci-lint", "run_command"),
		task(2, "Fix the reported issues", "write_file"))
	w.model(1, 2140, 31, 1792, 604)
	w.okArgs(1, "run_command", 8120, "3f1b2c9d0e4a5b6c")
	w.model(1, 3310, 18, 2048, 512)
	w.complete(1, CompletionSuccess, CompletionSuccess, "12 issues")
	w.model(2, 3402, 95, 3200, 877)
	w.failArgs(2, "write_file", 4, "permission", "open internal/x.go: permission denied", "9a0c11f2e3d4b5a6")
	w.model(2, 3530, 95, 3328, 861)
	w.failArgs(2, "write_file", 3, "permission", "open internal/x.go: permission denied", "9a0c11f2e3d4b5a6")
	w.model(2, 3688, 240, 3456, 1933)
	w.replan(TriggerToolFailures, "The file is read-only; fix the issues through the formatter", []int64{1},
		task(3, "Run gofmt -w on the package", "run_command"))
	w.model(3, 3930, 22, 3712, 498)
	w.okArgs(3, "run_command", 640, "c0ffee0012345678")
	w.model(3, 4010, 14, 3840, 455)
	w.complete(3, CompletionSuccess, CompletionSuccess, "")
	w.model(0, 4100, 60, 3968, 702)
	w.ended(OutcomeSuccess, "")
}

func TestSampleSessions(t *testing.T) {
	for _, s := range sessions {
		t.Run(s.file, func(t *testing.T) {
			w := &sessionWriter{tb: t}
			s.script(w)
			got := w.out.Bytes()
			golden.Check(t, filepath.Join(testdataDir, "valid", s.file), got)
		})
	}
}

// sessionWriter builds one session, event by event.
type sessionWriter struct {
	tb      testing.TB
	out     bytes.Buffer
	source  string
	subject string
	start   time.Time
	at      time.Time
	seq     int64

	plan_     []Task
	replans   int64
	calls     int64
	failed    int64
	taskCalls map[int64]int64
	usage     *Usage // the model calls' totals (v1.3 scripts)
}

// model is one agent.model.called for task taskID (0: none).
func (w *sessionWriter) model(taskID, in, out, cached, ms int64) {
	d := ModelCalledData{InputTokens: &in, OutputTokens: &out, CachedInputTokens: &cached, DurationMS: ms}
	if taskID != 0 {
		d.TaskID = &taskID
	}
	if w.usage == nil {
		w.usage = &Usage{InputTokens: new(int64), OutputTokens: new(int64), CachedInputTokens: new(int64)}
	}
	u := w.usage
	u.ModelCalls++
	*u.InputTokens += in
	*u.OutputTokens += out
	*u.CachedInputTokens += cached
	u.ModelMS += ms
	w.emit(ModelCalled, time.Duration(ms)*time.Millisecond, d)
}

func task(id int64, desc, hint string) Task {
	t := Task{ID: id, Description: desc}
	if hint != "" {
		t.ToolHint = &hint
	}
	return t
}

func typed(t Task, taskType string) Task {
	t.TaskType = taskType
	return t
}

func (w *sessionWriter) begin(source, subject, start string) {
	at, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		w.tb.Fatal(err)
	}
	w.source, w.subject, w.start, w.at = source, subject, at, at
	w.taskCalls = map[int64]int64{}
}

// emit writes one event, after gap.
func (w *sessionWriter) emit(typ Type, gap time.Duration, data any) {
	w.tb.Helper()
	w.seq++
	w.at = w.at.Add(gap)
	ev, err := New(w.source, w.subject, w.seq, typ, w.at, data)
	if err != nil {
		w.tb.Fatalf("seq %d: %v", w.seq, err)
	}
	ev.ID = testUUIDv7(w.at, w.subject, w.seq)
	b, err := ev.MarshalJSON()
	if err != nil {
		w.tb.Fatal(err)
	}
	if _, err := Decode(b); err != nil {
		w.tb.Fatalf("seq %d: %v", w.seq, err)
	}
	w.out.Write(b)
	w.out.WriteByte('\n')
}

// think is the model's latency before the next step: 0.6 to 3.3 s, varied
// but deterministic.
func (w *sessionWriter) think() time.Duration {
	return time.Duration(600+(w.seq*379)%2700) * time.Millisecond
}

func (w *sessionWriter) started(d SessionStartedData) {
	w.emit(SessionStarted, 0, d)
}

func (w *sessionWriter) plan(origin Origin, parseErr string, tasks ...Task) {
	w.plan_ = tasks
	w.emit(PlanCreated, w.think(), PlanCreatedData{Tasks: tasks, Origin: origin, ParseError: parseErr})
}

func (w *sessionWriter) strip(taskID int64, hint string, phase Phase, reason StripReason, ruleID string) {
	w.emit(HintStripped, 2*time.Millisecond, HintStrippedData{TaskID: taskID, ToolHint: hint, Phase: phase, Reason: reason, RuleID: ruleID})
}

func (w *sessionWriter) hintOf(taskID int64) *string {
	for _, t := range w.plan_ {
		if t.ID == taskID {
			return t.ToolHint
		}
	}
	w.tb.Fatalf("task %d is not in the plan", taskID)
	return nil
}

func (w *sessionWriter) call(taskID int64, tool string, ms int64, errKind, errMsg string, control bool) {
	w.callArgs(taskID, tool, ms, errKind, errMsg, control, "")
}

func (w *sessionWriter) callArgs(taskID int64, tool string, ms int64, errKind, errMsg string, control bool, digest string) {
	d := ToolCalledData{Tool: tool, OK: errMsg == "", ErrorKind: errKind, Error: errMsg, DurationMS: ms, Control: control, ArgsDigest: digest}
	if taskID != 0 {
		d.TaskID = &taskID
		d.Hint = w.hintOf(taskID)
		w.taskCalls[taskID]++
	}
	w.calls++
	if !d.OK {
		w.failed++
	}
	gap := time.Duration(ms) * time.Millisecond
	if !control {
		gap += w.think()
	}
	w.emit(ToolCalled, gap, d)
}

func (w *sessionWriter) ok(taskID int64, tool string, ms int64) {
	w.call(taskID, tool, ms, "", "", false)
}

func (w *sessionWriter) fail(taskID int64, tool string, ms int64, kind, msg string) {
	w.call(taskID, tool, ms, kind, msg, false)
}

func (w *sessionWriter) okArgs(taskID int64, tool string, ms int64, digest string) {
	w.callArgs(taskID, tool, ms, "", "", false, digest)
}

func (w *sessionWriter) failArgs(taskID int64, tool string, ms int64, kind, msg, digest string) {
	w.callArgs(taskID, tool, ms, kind, msg, false, digest)
}

func (w *sessionWriter) complete(taskID int64, c, reported Completion, summary string) {
	w.at = w.at.Add(w.think())
	w.call(taskID, "complete_task", 3, "", "", true)
	if c != CompletionFailure {
		for i := range w.plan_ {
			if w.plan_[i].ID == taskID {
				w.plan_[i].Completed = true
			}
		}
	}
	w.emit(TaskCompleted, time.Millisecond, TaskCompletedData{TaskID: taskID, Completion: c, Reported: reported, ToolCalls: w.taskCalls[taskID], Summary: summary})
}

func (w *sessionWriter) depthLimit(taskID, limit int64) {
	w.emit(DepthLimitReached, time.Millisecond, DepthLimitReachedData{TaskID: taskID, ToolCalls: w.taskCalls[taskID], Limit: limit})
}

type stripped struct {
	taskID int64
	hint   string
}

// replan is an accepted update_task_plan call: the new list is the kept
// tasks of the current plan, in that order, then add.
func (w *sessionWriter) replan(trigger Trigger, reason string, keep []int64, add ...Task) {
	w.replanStripping(trigger, reason, keep, nil, add...)
}

func (w *sessionWriter) replanStripping(trigger Trigger, reason string, keep []int64, strips []stripped, add ...Task) {
	w.replans++
	var tasks, dropped []Task
	kept := []int64{}
	for _, id := range keep {
		i := slices.IndexFunc(w.plan_, func(t Task) bool { return t.ID == id })
		if i < 0 {
			w.tb.Fatalf("keep %d: not in the plan", id)
		}
		tasks = append(tasks, w.plan_[i])
	}
	for _, t := range add {
		if i := slices.IndexFunc(w.plan_, func(p Task) bool { return p.ID == t.ID }); i >= 0 {
			t = w.plan_[i] // re-listed after new tasks: still kept
		}
		tasks = append(tasks, t)
	}
	for _, t := range tasks {
		if slices.ContainsFunc(w.plan_, func(p Task) bool { return p.ID == t.ID }) {
			kept = append(kept, t.ID)
		}
	}
	for _, p := range w.plan_ {
		if !slices.Contains(kept, p.ID) {
			dropped = append(dropped, p)
		}
	}
	w.plan_ = tasks
	w.emit(PlanUpdated, w.think(), PlanUpdatedData{Replan: w.replans, Trigger: trigger, Reason: reason, Tasks: tasks, Kept: kept, Dropped: dropped, OverCap: w.replans >= 3, Valid: true})
	for _, s := range strips {
		w.strip(s.taskID, s.hint, PhaseReplan, StripUnavailable, "")
	}
	w.call(0, "update_task_plan", 4, "", "", true)
}

// invalidReplan is an update_task_plan call the agent rejected.
func (w *sessionWriter) invalidReplan(trigger Trigger, reason, errMsg string) {
	w.replans++
	w.emit(PlanUpdated, w.think(), PlanUpdatedData{Replan: w.replans, Trigger: trigger, Reason: reason, OverCap: w.replans >= 3, Valid: false, Error: errMsg})
	w.call(0, "update_task_plan", 2, "invalid_plan", errMsg, true)
}

func (w *sessionWriter) ended(o Outcome, f Feedback) {
	gap := w.think()
	end := w.at.Add(gap)
	w.emit(SessionEnded, gap, SessionEndedData{
		Outcome: o, Replans: w.replans, ToolCalls: w.calls, FailedToolCalls: w.failed,
		Iterations: w.calls + 1, DurationMS: end.Sub(w.start).Milliseconds(), Feedback: f,
		Usage: w.usage,
	})
}

// testUUIDv7 is a UUIDv7 for time at whose random bits are derived from the
// session and seq, so that regenerated files do not change.
func testUUIDv7(at time.Time, subject string, seq int64) string {
	h := sha256.Sum256([]byte(subject + "/" + time.Duration(seq).String()))
	var u uuid.UUID
	ms := uint64(at.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	copy(u[6:], h[:10])
	u[6] = 0x70 | u[6]&0x0F
	u[8] = 0x80 | u[8]&0x3F
	return u.String()
}
