package sim

import (
	"time"
)

// CostTruth is what a set of sessions (or of their plan segments) spent,
// as the simulator counted it while it ran them: the truth analyze cost
// must find in the events.
type CostTruth struct {
	Sessions          int64 `json:"sessions"`
	Segments          int64 `json:"segments,omitempty"` // segments only (between_replans: several a session)
	ModelCalls        int64 `json:"model_calls"`
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	RealCalls         int64 `json:"real_tool_calls"`
	FailedCalls       int64 `json:"failed_real_tool_calls"`
	DurationMS        int64 `json:"duration_ms"`
}

// StuckTruth is one stuck state (analyze stuck) as the simulator counted
// it: the sessions that were in it, its occurrences, and the stuck sessions
// that still succeeded.
type StuckTruth struct {
	Sessions    int64 `json:"sessions"`
	Occurrences int64 `json:"occurrences"`
	Recovered   int64 `json:"recovered"`
}

// TriggerTruth is one visible replan trigger (analyze stuck -view
// triggers): its replans, the sessions with one, and those that succeeded.
type TriggerTruth struct {
	Replans   int64 `json:"replans"`
	Sessions  int64 `json:"sessions"`
	Successes int64 `json:"successes"`
}

// AfterFailureTruth is what followed the failed hinted calls of one hint
// and next step (analyze cost -view after-failure): the failures, those
// recovered (a successful real call followed), and what recovering cost.
type AfterFailureTruth struct {
	Failures   int64 `json:"failures"`
	Recovered  int64 `json:"recovered"`
	ModelCalls int64 `json:"model_calls"`
	Tokens     int64 `json:"tokens"`
	RealCalls  int64 `json:"real_tool_calls"`
	DurationMS int64 `json:"duration_ms"`
}

// Outcome classes of analyze cost.
const (
	classFirstTry    = "first_try_success"
	classAfterReplan = "success_after_replans"
	classFailure     = "failure"
)

// segment is what one plan segment spent.
type segment struct {
	start              time.Time
	models             int64
	in, out, cached    int64
	calls, failedCalls int64
}

// call is one real tool call, as the loop state needs it.
type call struct {
	tool, args, err string
	ok              bool
	repeat          bool
}

// failure is a failed hinted call waiting for the call that recovers it.
type failure struct {
	hint, tool, step string
	at               time.Time
	models, tokens   int64
	calls            int64
	recovered        bool
	ms               int64
}

// ledger follows one session as the analyzers define its costs and stuck
// states (queries/analyze/cost_*.sql, stuck_states.sql,
// replan_triggers.sql), from the simulator's side.
type ledger struct {
	segs      []*segment
	last      *call // the last real call
	sincePlan struct {
		calls    int64
		lastOK   bool
		lastHint bool
		depth    bool
	}
	depthSeen map[int64]bool
	stuck     map[string]int64
	triggers  map[string]int64
	fails     []*failure
	pending   bool
	closed    int64 // the task completed as a failure (0: none)
	end       time.Time
}

func newLedger(start time.Time) *ledger {
	return &ledger{segs: []*segment{{start: start}}, depthSeen: map[int64]bool{},
		stuck: map[string]int64{}, triggers: map[string]int64{}}
}

func (l *ledger) seg() *segment { return l.segs[len(l.segs)-1] }

// model records a model call.
func (l *ledger) model(in, out, cached int64) {
	s := l.seg()
	s.models++
	s.in += in
	s.out += out
	s.cached += cached
	for _, f := range l.fails {
		if !f.recovered {
			f.models++
			f.tokens += in + out
		}
	}
}

// call records a real tool call made for a task with the hint given (nil
// for none).
func (l *ledger) call(tool, args string, ok bool, errText string, hint *string, at time.Time) {
	s := l.seg()
	s.calls++
	if !ok {
		s.failedCalls++
	}
	c := &call{tool: tool, args: args, err: errText, ok: ok}
	if p := l.last; p != nil && !ok && !p.ok && p.tool == tool && (errText != "" && errText == p.err || args == p.args) {
		c.repeat = true
		if !(p.repeat && p.tool == tool) {
			l.stuck["loop"]++
		}
	}
	l.last = c
	l.sincePlan.calls++
	l.sincePlan.lastOK = ok
	l.sincePlan.lastHint = hint != nil
	for _, f := range l.fails {
		if f.recovered {
			continue
		}
		if f.step == "" {
			f.step = "switch"
			if tool == f.tool {
				f.step = "retry"
			}
		}
		f.calls++
		if ok {
			f.recovered = true
			f.ms = at.Sub(f.at).Milliseconds()
		}
	}
	if !ok && hint != nil {
		l.fails = append(l.fails, &failure{hint: *hint, tool: tool, at: at})
	}
}

// depthLimit records a call that used up task's budget (the planner emits
// agent.depth_limit.reached once per task).
func (l *ledger) depthLimit(task int64) {
	if !l.depthSeen[task] {
		l.depthSeen[task] = true
		l.stuck["depth_limit"]++
		l.sincePlan.depth = true
	}
}

// replan records an update_task_plan call at the time given.
func (l *ledger) replan(at time.Time, overCap bool) {
	sp := l.sincePlan
	switch {
	case sp.calls > 0 && !sp.lastOK && sp.lastHint:
		l.triggers["failed_hinted_call"]++
	case sp.depth:
		l.triggers["depth_limit"]++
	case sp.calls == 0:
		l.triggers["no_tool_call"]++
	default:
		l.triggers["none_visible"]++
	}
	if sp.calls == 0 {
		l.stuck["churn"]++
	}
	if overCap {
		l.stuck["soft_cap"]++
	}
	for _, f := range l.fails {
		if !f.recovered && f.step == "" {
			f.step = "replan"
		}
	}
	l.sincePlan = struct {
		calls    int64
		lastOK   bool
		lastHint bool
		depth    bool
	}{}
	l.segs = append(l.segs, &segment{start: at})
}

// ended records the session's end: its time, and whether its plan still
// had a task neither completed nor closed.
func (l *ledger) ended(at time.Time, pending bool) {
	l.end = at
	l.pending = pending
	if pending {
		l.stuck["pending_at_end"]++
	}
}

// addTo adds the session to the run's truth.
func (l *ledger) addTo(s *Summary, class string, success bool) {
	if s.Cost == nil {
		s.Cost, s.Segments = map[string]*CostTruth{}, map[string]*CostTruth{}
		s.Stuck, s.Triggers, s.AfterFailure = map[string]*StuckTruth{}, map[string]*TriggerTruth{}, map[string]*AfterFailureTruth{}
	}
	c := get(s.Cost, class)
	c.Sessions++
	c.DurationMS += l.end.Sub(l.segs[0].start).Milliseconds()
	n := len(l.segs)
	seen := map[string]bool{}
	for k, sg := range l.segs {
		label := "no_replan"
		switch {
		case n == 1:
		case k == 0:
			label = "before_first_replan"
		case k < n-1:
			label = "between_replans"
		default:
			label = "after_last_replan"
		}
		end := l.end
		if k < n-1 {
			end = l.segs[k+1].start
		}
		t := get(s.Segments, label)
		if !seen[label] {
			seen[label] = true
			t.Sessions++
		}
		t.Segments++
		for _, x := range []*CostTruth{t, c} {
			x.ModelCalls += sg.models
			x.InputTokens += sg.in
			x.OutputTokens += sg.out
			x.CachedInputTokens += sg.cached
			x.RealCalls += sg.calls
			x.FailedCalls += sg.failedCalls
		}
		t.DurationMS += max(end.Sub(sg.start).Milliseconds(), 0)
	}
	for state, occ := range l.stuck {
		if occ == 0 {
			continue
		}
		t := get(s.Stuck, state)
		t.Sessions++
		t.Occurrences += occ
		if success {
			t.Recovered++
		}
	}
	for trig, n := range l.triggers {
		t := get(s.Triggers, trig)
		t.Replans += n
		t.Sessions++
		if success {
			t.Successes++
		}
	}
	for _, f := range l.fails {
		step := f.step
		if step == "" {
			step = "stop"
		}
		t := get(s.AfterFailure, f.hint+" "+step)
		t.Failures++
		if f.recovered {
			t.Recovered++
			t.ModelCalls += f.models
			t.Tokens += f.tokens
			t.RealCalls += f.calls
			t.DurationMS += f.ms
		}
	}
}

func get[T any](m map[string]*T, k string) *T {
	v := m[k]
	if v == nil {
		v = new(T)
		m[k] = v
	}
	return v
}
