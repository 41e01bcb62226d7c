package skilllite

import (
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// turn is the state of one session: one agent_chat turn of SkillLite.
type turn struct {
	hash       turnHash
	out        []pending // the events so far, session.started and ended aside
	start      time.Time
	startKnown bool // start is a line's time
	model      string

	goal       string
	sessionKey string        // the request's session_key
	hasGoal    bool          // goal is the request's message
	firstTasks []events.Task // the first task_plan's tasks

	track    *plandialect.Tracker // the plan in force
	planned  bool                 // a task_plan came
	hasTasks bool                 // some plan had a task
	anyCall  bool                 // a tool_call came

	// The session's plan source (planfile.go): SkillLite's task list once
	// it has a task, a plan file before that.
	source    planSource
	files     *plandialect.FileTracker // the plan files' known contents; nil before the first file call
	fileTrack *plandialect.Tracker     // the plan the files state; the plan in force with sourceFile
	emptyPlan int                      // index in out of the empty first plan's agent.plan.created; -1 none

	// open is the call awaiting its result. SkillLite runs the calls of a
	// batch one after the other: tool_call, then what the call changes
	// (task_plan, task_progress), then tool_result, if not suppressed
	// (skilllite-agent/src/agent_loop/execution.rs:351-511).
	open     *call
	executed []*call // calls run in the turn, with their results

	// The batch: the tool calls of one LLM response, between llm_usage lines.
	transitioned bool           // a call moved the current task: the rest are skipped
	batchFailed  bool           // a call of the batch failed
	trigger      events.Trigger // of update_task_plan calls in the batch
	depthHit     bool           // the previous batch ended at the depth limit
	currentCalls int64          // SkillLite's tool_calls_current_task

	completions []completion   // task completions waiting for the open call
	completed   map[int64]bool // tasks whose agent.task.completed is out
	taskCalls   map[int64]int64
	taskFails   map[int64]int64 // failed work calls per task

	attempts       int64 // agent.plan.updated events: the replan ordinal
	counted        int64 // update_task_plan calls that reached SkillLite's handler
	toolCalls      int64
	failed         int64
	iterations     int64
	usage          usage  // the model calls' (llm_usage lines)
	agentToolCalls int64  // the done line's tool_calls; -1 without one
	completionType string // the done line's completion_type
}

func newTurn(track *plandialect.Tracker, start time.Time, model string) *turn {
	return &turn{
		hash: newTurnHash(), start: start, model: model, track: track, trigger: events.TriggerModel,
		completed: map[int64]bool{}, taskCalls: map[int64]int64{}, taskFails: map[int64]int64{},
		agentToolCalls: -1, emptyPlan: -1,
	}
}

// current returns SkillLite's current task, the first one not completed:
// its id (0 for none) and hint.
func (tr *turn) current() (int64, *string) {
	task, ok := tr.track.Current()
	if !ok {
		return 0, nil
	}
	if task.Hint == "" {
		return task.ID, nil
	}
	h := task.Hint
	return task.ID, &h
}

// listCurrent returns SkillLite's own current task (0 for none): the one
// its task transitions and depth count follow. While a plan file is the
// session's plan, SkillLite's list has no task.
func (tr *turn) listCurrent() int64 {
	if tr.source == sourceFile {
		return 0
	}
	id, _ := tr.current()
	return id
}

// inPlan reports whether the plan in force has task id.
func (tr *turn) inPlan(id int64) bool {
	for _, task := range tr.track.Plan() {
		if task.ID == id {
			return true
		}
	}
	return false
}

// renewed starts a fresh tally for tasks whose id now names another task
// (SkillLite renumbers the tasks a replan adds).
func (tr *turn) renewed(ids []int64) {
	for _, id := range ids {
		delete(tr.completed, id)
		delete(tr.taskCalls, id)
		delete(tr.taskFails, id)
	}
}
