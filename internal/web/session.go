package web

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"
)

// sessionPage is one session: what it was, its plan versions side by side,
// its tool calls under the tasks they served, its replans and where it got
// stuck, the rules and arm it ran with, and its raw events.
type sessionPage struct {
	Frame
	ID                                     string
	Goal, Agent, Version, Model, TaskType  string
	Outcome, Feedback                      string
	Ended                                  bool
	Started, EndedAt                       time.Time
	DurationMS                             int64
	Replans, Rejected, AgentReplans, Calls int64
	Failed, Stripped, Hallucinated         int64
	OverCap, Mismatch                      bool
	Tools                                  []string
	Ruleset                                string
	Rules                                  []string
	Arm                                    *assignment
	Plans                                  []*planVersion
	Attempts                               []replanAttempt
	Limits                                 []depthLimit
	Stuck                                  []stuckAt
	Unplaced                               []call // calls before the first plan, or of no task of the plan in force
	Timeline                               timeline
	CallsCut                               bool // more calls than the page shows
	Events                                 []rawEvent
	EventsSQL, EventsNext                  string
	Start                                  time.Time // the timeline's origin
}

type assignment struct {
	Ruleset, Arm, Unit, UnitID string
	Holdout                    float64
}

// planVersion is one version of the plan: created, or a valid replan.
type planVersion struct {
	N                      int // 1-based version number
	Seq                    int64
	Time                   time.Time
	Kind, Origin, ParseErr string
	Replan                 int64
	Trigger, Reason        string
	OverCap                bool
	Tasks                  []*planTask
	Dropped                []droppedTask // the pending tasks it dropped that no new task took the place of
	Stripped               []strip       // hints stripped of tasks it does not hold
}

type planTask struct {
	ID                    int64
	Description, TaskType string
	Hint                  *string
	Completed             bool
	Mark, Was             string // diffPlan's; empty in the first version
	Stripped              []strip
	Calls                 []call
	Done                  []taskMark
}

type droppedTask struct {
	ID          int64
	Description string
	Hint        *string
}

type strip struct {
	Seq          int64
	TaskID       int64
	Hint, Phase  string
	Reason, Rule string
}

type call struct {
	Seq                    int64
	Time                   time.Time
	Offset                 time.Duration // from the timeline's origin to the call's start
	TaskID                 *int64
	Tool, ErrorKind, Error string
	Hint                   *string
	OK, Control            bool
	DurationMS             int64
}

type taskMark struct {
	Kind, Completion, Summary string
	Seq, ToolCalls, Limit     int64
}

type replanAttempt struct {
	Seq, Replan, Tasks, Dropped int64
	Time                        time.Time
	Trigger, Reason, Error      string
	Valid, OverCap              bool
	Kept                        []int64
}

type depthLimit struct {
	Seq, TaskID, ToolCalls, Limit int64
	Time                          time.Time
}

type stuckAt struct {
	State, Detail string
	Seq           int64
}

type rawEvent struct {
	Seq                         int64
	Time, Ingested              time.Time
	Type, Source, ID, Data, Ext string
	Subject                     string
	StreamSeq                   string
}

// callLimit bounds the tool calls a session page lists.
const callLimit = 5000

func (s *Server) session(ctx context.Context, r *http.Request, buf *bytes.Buffer) error {
	id := r.PathValue("id")
	one := params{"session": id}
	t, err := s.lookup(ctx, "session", one)
	if err != nil {
		return err
	}
	if len(t.rows) == 0 {
		return &httpError{http.StatusNotFound, "no session " + strconv.Quote(id) + " in the database"}
	}
	p := &sessionPage{Frame: s.frame("Session "+id+" · evosignal", "sessions"), ID: id}
	sr := t.row(0)
	p.Goal, p.Agent, p.Version, p.Model, p.TaskType = sr.str("goal"), sr.str("agent"), sr.str("version"), sr.str("model"), sr.str("task_type")
	p.Ended, p.Outcome, p.Feedback = sr.bool("ended"), sr.str("outcome"), sr.str("feedback")
	if !p.Ended {
		p.Outcome = "open (no agent.session.ended yet)"
	}
	p.Started, p.EndedAt, p.DurationMS = sr.time("started_at"), sr.time("ended_at"), sr.int("duration_ms")
	p.Replans, p.Rejected, p.AgentReplans = sr.int("valid_replans"), sr.int("invalid_replans"), sr.int("agent_replans")
	p.Calls, p.Failed = sr.int("real_tool_calls"), sr.int("failed_real_tool_calls")
	p.Stripped, p.Hallucinated = sr.int("stripped_hints"), sr.int("hallucinated_hints")
	p.OverCap, p.Mismatch, p.Tools = sr.bool("over_cap"), sr.bool("reported_replans_mismatch"), sr.strs("tools")

	if err := s.sessionRules(ctx, p, one); err != nil {
		return err
	}
	if err := s.sessionPlans(ctx, p, one); err != nil {
		return err
	}
	if err := s.sessionCalls(ctx, p, one); err != nil {
		return err
	}
	st, err := s.lookup(ctx, "session_stuck", one)
	if err != nil {
		return err
	}
	st.each(func(r row) { p.Stuck = append(p.Stuck, stuckAt{r.str("state"), r.str("detail"), r.int("seq")}) })
	if err := s.sessionEvents(ctx, p, r); err != nil {
		return err
	}
	p.Timeline = newTimeline(p)
	return render(buf, "session", p)
}

func (s *Server) sessionRules(ctx context.Context, p *sessionPage, one params) error {
	t, err := s.lookup(ctx, "session_assignment", one)
	if err != nil || len(t.rows) == 0 {
		return err
	}
	r := t.row(0)
	p.Ruleset, p.Rules = r.str("ruleset"), r.strs("rules")
	if !r.null("arm") {
		p.Arm = &assignment{Ruleset: r.str("assigned_ruleset"), Arm: r.str("arm"), Unit: r.str("unit"), UnitID: r.str("unit_id"), Holdout: r.float("holdout")}
	}
	return nil
}

// sessionPlans reads the plan versions, the replans and what they dropped
// and the stripped hints, and marks each version's tasks against the one
// before (diffPlan).
func (s *Server) sessionPlans(ctx context.Context, p *sessionPage, one params) error {
	pt, err := s.lookup(ctx, "session_plans", one)
	if err != nil {
		return err
	}
	var cur *planVersion
	pt.each(func(r row) {
		if cur == nil || cur.Seq != r.int("seq") {
			cur = &planVersion{N: len(p.Plans) + 1, Seq: r.int("seq"), Time: r.time("time"), Kind: r.str("kind"),
				Origin: r.str("origin"), ParseErr: r.str("parse_error"), Replan: r.int("replan")}
			p.Plans = append(p.Plans, cur)
		}
		if r.null("task_id") {
			return // a plan without tasks
		}
		cur.Tasks = append(cur.Tasks, &planTask{ID: r.int("task_id"), Description: r.str("description"), TaskType: r.str("task_type"),
			Hint: r.strp("tool_hint"), Completed: r.bool("completed"), Mark: map[bool]string{true: "new", false: "old"}[r.bool("is_new")]})
	})
	rt, err := s.lookup(ctx, "session_replans", one)
	if err != nil {
		return err
	}
	rt.each(func(r row) {
		a := replanAttempt{Seq: r.int("seq"), Replan: r.int("replan"), Tasks: r.int("task_count"), Dropped: r.int("dropped_count"),
			Time: r.time("time"), Trigger: r.str("trigger"), Reason: r.str("reason"), Error: r.str("error"),
			Valid: r.bool("valid"), OverCap: r.bool("over_cap"), Kept: r.ints("kept")}
		p.Attempts = append(p.Attempts, a)
		if v := p.version(a.Seq); v != nil && v.Seq == a.Seq {
			v.Trigger, v.Reason, v.OverCap = a.Trigger, a.Reason, a.OverCap
		}
	})
	dt, err := s.lookup(ctx, "session_dropped", one)
	if err != nil {
		return err
	}
	dropped := map[int64][]droppedTask{}
	dt.each(func(r row) {
		dropped[r.int("replan_seq")] = append(dropped[r.int("replan_seq")], droppedTask{r.int("task_id"), r.str("description"), r.strp("tool_hint")})
	})
	for i, v := range p.Plans {
		tasks := make([]diffTask, len(v.Tasks))
		for k, t := range v.Tasks {
			tasks[k] = diffTask{Description: t.Description, New: t.Mark == "new"}
		}
		if i == 0 {
			for _, t := range v.Tasks {
				t.Mark = ""
			}
			continue
		}
		gone := dropped[v.Seq]
		if _, ok := dropped[v.Seq]; !ok {
			// No dropped list recorded: the pending tasks of the version
			// before are what the replan replaced.
			for _, t := range p.Plans[i-1].Tasks {
				if !t.Completed {
					gone = append(gone, droppedTask{t.ID, t.Description, t.Hint})
				}
			}
		}
		texts := make([]string, len(gone))
		for k, d := range gone {
			texts[k] = d.Description
		}
		marks, was, left := diffPlan(tasks, texts)
		for k, t := range v.Tasks {
			t.Mark, t.Was = marks[k], was[k]
		}
		for _, k := range left {
			v.Dropped = append(v.Dropped, gone[k])
		}
	}
	ht, err := s.lookup(ctx, "session_hints_stripped", one)
	if err != nil {
		return err
	}
	ht.each(func(r row) {
		x := strip{Seq: r.int("seq"), TaskID: r.int("task_id"), Hint: r.str("tool_hint"), Phase: r.str("phase"), Reason: r.str("reason"), Rule: r.str("rule_id")}
		v := p.version(x.Seq)
		if v == nil {
			return
		}
		if t := v.task(x.TaskID); t != nil {
			t.Stripped = append(t.Stripped, x)
			return
		}
		v.Stripped = append(v.Stripped, x)
	})
	return nil
}

// version is the plan version in force at seq: the last with a lower or
// equal seq; nil before the first.
func (p *sessionPage) version(seq int64) *planVersion {
	var out *planVersion
	for _, v := range p.Plans {
		if v.Seq <= seq {
			out = v
		}
	}
	return out
}

func (v *planVersion) task(id int64) *planTask {
	for _, t := range v.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// sessionCalls puts each tool call, depth limit and completion under the
// task it served in the plan version in force when it happened.
func (s *Server) sessionCalls(ctx context.Context, p *sessionPage, one params) error {
	ct, err := s.lookup(ctx, "session_tool_calls", params{"session": one["session"], "limit": int64(callLimit + 1)})
	if err != nil {
		return err
	}
	p.Start = p.Started
	if len(p.Plans) > 0 && (p.Start.IsZero() || p.Plans[0].Time.Before(p.Start)) {
		p.Start = p.Plans[0].Time
	}
	for i := range min(len(ct.rows), callLimit) {
		r := ct.row(i)
		c := call{Seq: r.int("seq"), Time: r.time("time"), Tool: r.str("tool"), ErrorKind: r.str("error_kind"), Error: r.str("error"),
			Hint: r.strp("hint"), OK: r.bool("ok"), Control: r.bool("control"), DurationMS: r.int("duration_ms")}
		if !r.null("task_id") {
			id := r.int("task_id")
			c.TaskID = &id
		}
		start := c.Time.Add(-time.Duration(c.DurationMS) * time.Millisecond)
		if p.Start.IsZero() || start.Before(p.Start) {
			p.Start = start
		}
		p.place(c)
	}
	p.CallsCut = len(ct.rows) > callLimit
	for _, v := range p.Plans {
		for _, t := range v.Tasks {
			for i := range t.Calls {
				t.Calls[i].Offset = t.Calls[i].Time.Add(-time.Duration(t.Calls[i].DurationMS) * time.Millisecond).Sub(p.Start)
			}
		}
	}
	for i := range p.Unplaced {
		p.Unplaced[i].Offset = p.Unplaced[i].Time.Add(-time.Duration(p.Unplaced[i].DurationMS) * time.Millisecond).Sub(p.Start)
	}
	mt, err := s.lookup(ctx, "session_marks", one)
	if err != nil {
		return err
	}
	mt.each(func(r row) {
		m := taskMark{Kind: r.str("kind"), Completion: r.str("completion"), Summary: r.str("summary"), Seq: r.int("seq"),
			ToolCalls: r.int("tool_calls"), Limit: r.int("call_limit")}
		if m.Kind == "depth_limit" {
			p.Limits = append(p.Limits, depthLimit{Seq: m.Seq, TaskID: r.int("task_id"), ToolCalls: m.ToolCalls, Limit: m.Limit, Time: r.time("time")})
		}
		if v := p.version(m.Seq); v != nil {
			if t := v.task(r.int("task_id")); t != nil {
				t.Done = append(t.Done, m)
			}
		}
	})
	return nil
}

func (p *sessionPage) place(c call) {
	if v := p.version(c.Seq); v != nil && c.TaskID != nil {
		if t := v.task(*c.TaskID); t != nil {
			t.Calls = append(t.Calls, c)
			return
		}
	}
	p.Unplaced = append(p.Unplaced, c)
}

func (s *Server) sessionEvents(ctx context.Context, p *sessionPage, r *http.Request) error {
	limit := int64(4 * s.cfg.PageSize)
	var after any
	if a := r.URL.Query().Get("after_seq"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return badRequest("after_seq %q: want a whole number", a)
		}
		after = n
	}
	et, err := s.lookup(ctx, "session_events", params{"session": p.ID, "after_seq": after, "limit": limit + 1})
	if err != nil {
		return err
	}
	for i := range min(len(et.rows), int(limit)) {
		r := et.row(i)
		e := rawEvent{Seq: r.int("seq"), Time: r.time("time"), Ingested: r.time("ingested_at"), Type: r.str("type"),
			Source: r.str("source"), ID: r.str("id"), Data: r.str("data"), Ext: r.str("ext"), Subject: r.str("subject")}
		if !r.null("stream_seq") {
			e.StreamSeq = strconv.FormatInt(r.int("stream_seq"), 10)
		}
		p.Events = append(p.Events, e)
	}
	if len(et.rows) > int(limit) {
		p.EventsNext = "?after_seq=" + strconv.FormatInt(p.Events[len(p.Events)-1].Seq, 10) + "#events"
	}
	p.EventsSQL = sqlText("session_events")
	return nil
}
