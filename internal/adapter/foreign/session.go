// Package foreign is what the OpenTelemetry and Claude Code adapters share:
// one session of a foreign agent, fed its plan-tool calls, ordinary tool
// calls and boundaries in order, emitting evosignal events with ids and seqs
// the caller derives from the foreign record, so that translating the same
// record twice gives the same events (and the store keeps them once).
//
// The plan-tool calls go through the plan-dialect core
// (internal/plandialect), which decides what each one was; a Session only
// emits what the core's Result names and keeps the session's own totals for
// agent.session.ended, as every adapter does. It judges nothing else.
package foreign

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// maxError is the longest error text agent.tool.called takes.
const maxError = 4096

// Quality counts what a translation could not use, for the caller's report.
type Quality struct {
	// PlanCallsWithoutArguments: plan-tool calls whose arguments were not
	// recorded (OpenTelemetry content capture off); the plan is not guessed.
	PlanCallsWithoutArguments int64
	// PlanCallsUnreadable: plan-tool calls whose arguments their dialect
	// could not read (plandialect.ErrArguments); the plan stays as it was.
	PlanCallsUnreadable int64
	// PlanCallsFailed: plan-tool calls the agent reported as failed; the plan
	// stays as it was.
	PlanCallsFailed int64

	// Plan files (WithFiles): operations on a plan file that were not
	// classified, by the core's reason (plandialect.Quality…).
	//
	// PlanFileUnknownPrior: edits of a plan file whose content before them
	// was unknown; nothing classified, nothing guessed.
	PlanFileUnknownPrior int64
	// PlanFileMismatch: edits that did not apply to the known content; the
	// content is unknown from then on.
	PlanFileMismatch int64
	// PlanFileUnreadable: plan file contents the Markdown dialect could not
	// read.
	PlanFileUnreadable int64
	// PlanFileNoTasks: plan files written without a checklist item before
	// the session had a plan.
	PlanFileNoTasks int64
	// PlanFileDeleted: plan files deleted; the plan in force stays.
	PlanFileDeleted int64
	// PlanFileCallsFailed: file tool calls on a plan file that failed in the
	// agent; they changed nothing.
	PlanFileCallsFailed int64
	// FileCallsUnread: file tool calls whose arguments were not recorded,
	// so whether they touched a plan file is unknown; every plan file's
	// content is unknown after them.
	FileCallsUnread int64
	// FileCallsUnreadable: file tool calls whose arguments were recorded
	// but are not the file tool's (no file path: another tool of the same
	// name); likewise unknown, and every plan file's content after them.
	FileCallsUnreadable int64
	// PlanFileSuperseded: file tool calls on a plan file in a session whose
	// plan is the agent's plan tool (it had listed a task): not read as
	// plans, kept as ordinary tool calls (docs/plan-dialects.md, "Two plan
	// sources").
	PlanFileSuperseded int64
	// ImpossibleUsage: model calls that reported a negative token count;
	// the count is taken as not reported (never summed), the call kept.
	ImpossibleUsage int64
}

// Add adds o to q.
func (q *Quality) Add(o Quality) {
	q.PlanCallsWithoutArguments += o.PlanCallsWithoutArguments
	q.PlanCallsUnreadable += o.PlanCallsUnreadable
	q.PlanCallsFailed += o.PlanCallsFailed
	q.PlanFileUnknownPrior += o.PlanFileUnknownPrior
	q.PlanFileMismatch += o.PlanFileMismatch
	q.PlanFileUnreadable += o.PlanFileUnreadable
	q.PlanFileNoTasks += o.PlanFileNoTasks
	q.PlanFileDeleted += o.PlanFileDeleted
	q.PlanFileCallsFailed += o.PlanFileCallsFailed
	q.FileCallsUnread += o.FileCallsUnread
	q.FileCallsUnreadable += o.FileCallsUnreadable
	q.PlanFileSuperseded += o.PlanFileSuperseded
	q.ImpossibleUsage += o.ImpossibleUsage
}

// Notes returns q as data-quality sentences, none when q is zero.
func (q Quality) Notes() []string {
	var n []string
	if q.PlanCallsWithoutArguments > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls carried no arguments and were not read as plans (the plan is never guessed); with OpenTelemetry, enable content capture so that gen_ai.tool.call.arguments is recorded (e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)", q.PlanCallsWithoutArguments))
	}
	if q.PlanCallsUnreadable > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls had arguments their dialect could not read; the plan in force was kept", q.PlanCallsUnreadable))
	}
	if q.PlanCallsFailed > 0 {
		n = append(n, fmt.Sprintf("%d plan-tool calls failed in the agent; the plan in force was kept", q.PlanCallsFailed))
	}
	for _, f := range []struct {
		n    int64
		why  plandialect.Quality
		then string
	}{
		{q.PlanFileUnknownPrior, plandialect.QualityUnknownPrior, "nothing was guessed"},
		{q.PlanFileMismatch, plandialect.QualityMismatch, "the file's content is unknown until its next whole write"},
		{q.PlanFileUnreadable, plandialect.QualityUnreadable, "the plan in force was kept"},
		{q.PlanFileNoTasks, plandialect.QualityNoTasks, "no plan was created"},
		{q.PlanFileDeleted, plandialect.QualityDeleted, "the plan in force was kept"},
	} {
		if f.n > 0 {
			n = append(n, fmt.Sprintf("%d plan-file operations were not read as plans: %s; %s", f.n, f.why, f.then))
		}
	}
	if q.PlanFileCallsFailed > 0 {
		n = append(n, fmt.Sprintf("%d file tool calls on a plan file failed in the agent; they changed nothing", q.PlanFileCallsFailed))
	}
	if q.FileCallsUnread > 0 {
		n = append(n, fmt.Sprintf("%d file tool calls carried no arguments, so whether they touched a plan file is unknown; plan files' contents were taken as unknown after them (with OpenTelemetry, enable content capture)", q.FileCallsUnread))
	}
	if q.FileCallsUnreadable > 0 {
		n = append(n, fmt.Sprintf("%d file tool calls had arguments without the file path their tool takes (another tool of the same name?), so whether they touched a plan file is unknown; plan files' contents were taken as unknown after them", q.FileCallsUnreadable))
	}
	if q.PlanFileSuperseded > 0 {
		n = append(n, fmt.Sprintf("%d file tool calls on a plan file came in sessions planned with the agent's plan tool; the plan tool's list is the session's plan, so they were kept as ordinary tool calls and not read as plans", q.PlanFileSuperseded))
	}
	if q.ImpossibleUsage > 0 {
		n = append(n, fmt.Sprintf("%d model calls reported a negative token count; those counts were taken as not reported and not summed", q.ImpossibleUsage))
	}
	return n
}

// At is where an event of a session goes: its id and its time, and the seq
// it asks for. The session gives it max(Seq, the last seq + 1), so seqs
// increase whatever the caller asks, and a caller keying Seq on time (as the
// OpenTelemetry adapter does) keeps the order across restarts.
type At struct {
	ID   string
	Time time.Time
	Seq  int64
}

// Call is one tool call as the foreign record states it.
type Call struct {
	Tool string
	// Name is the tool name agent.tool.called records, when it differs from
	// Tool (Cursor's hooks: Tool is the hook event the plan-file config
	// knows, Name the tool it stands for); "" records Tool.
	Name string
	Args []byte // the call's arguments (JSON); nil when not recorded
	// Result is the call's result (JSON) where the record has one (Claude
	// Code's tool_response); an incremental task tool's created task id is
	// there. nil when not recorded.
	Result   []byte
	OK       bool
	Error    string // why it failed
	Kind     string // class of the failure (error_kind)
	Duration time.Duration
}

// Session translates one session of a foreign agent, as a sequence of
// requests (docs/plan-dialects.md, "Requests"): a plan call that lists a
// new task when every task of the plan in force is completed
// (plandialect.Began) ends the request in force, with outcome success, and
// begins the next one, <id>/2, <id>/3, …, which the adapter goes on feeding.
// Not safe for concurrent use.
type Session struct {
	sink   agent.Sink
	source string
	base   string // the id of the first request
	id     string // the request in force
	n      int    // requests begun, from 1
	reg    *plandialect.Registry
	tr     *plandialect.Tracker
	files  *Files                   // nil: plan files are not read
	dir    string                   // the session's working directory, for plan file paths
	ft     *plandialect.FileTracker // the plan files' known contents
	// toolPlanned: a plan-tool call gave the session a plan with a task;
	// from then on the plan tool is the session's only plan source.
	toolPlanned bool
	// st follows incremental task tools (nil until the first one); heldAt
	// is where the steps it holds, if any, are emitted: the last held
	// step's call.
	st     *plandialect.StepTracker
	heldAt At
	// held is a whole-list plan call waiting for the end of its burst
	// (nil: none): a burst of plan calls with no real call between them is
	// classified as its last call.
	held *plandialect.Plan

	seq        int64
	started    bool
	start      events.SessionStartedData // the first request's, for the next ones
	startAt    time.Time                 // the request's
	iterations int64
	usage      usage // the request's model calls (Model)
	replans    int64 // agent.plan.updated events of the request
	calls      int64 // agent.tool.called events of the request
	failed     int64
	taskCalls  map[int64]int64 // work calls per task id
	taskFails  map[int64]int64
	quality    Quality
	emitted    int64
}

// New returns the Session id of source, emitting to sink. An id longer
// than a session id may be (128 characters) is replaced by its hash.
func New(sink agent.Sink, source, id string, reg *plandialect.Registry) *Session {
	if id == "" || utf8.RuneCountInString(id) > maxKey {
		id = hashed(id)
	}
	return &Session{sink: sink, source: source, base: id, id: id, n: 1, reg: reg, tr: reg.NewTracker(),
		taskCalls: map[int64]int64{}, taskFails: map[int64]int64{}}
}

// Files recognises plan-file operations for Sessions: the core's
// plandialect.Files and the file tools of its config. Immutable, safe for
// concurrent use; one per adapter.
type Files struct {
	files *plandialect.Files
	tools map[string]bool
}

// NewFiles returns the Files of cfg, or cfg's problems.
func NewFiles(cfg plandialect.FilesConfig) (*Files, error) {
	f, err := plandialect.NewFiles(cfg)
	if err != nil {
		return nil, err
	}
	tools := map[string]bool{}
	for t := range cfg.Tools {
		tools[t] = true
	}
	return &Files{files: f, tools: tools}, nil
}

// WithFiles makes s read plan files (docs/plan-dialects.md, "Markdown plan
// files"): a file tool call on a plan file is a plan operation, classified
// by the same Tracker as plan-tool calls; dir is the directory relative
// paths are resolved against ("" for none). Call it before the first Tool.
func (s *Session) WithFiles(files *Files, dir string) *Session {
	s.files, s.dir = files, dir
	s.forget()
	return s
}

// forget drops every plan file's known content.
func (s *Session) forget() {
	if s.files != nil {
		s.ft = s.files.files.NewTracker(s.tr).WithDir(s.dir)
	}
}

// ID is the session id of the request in force.
func (s *Session) ID() string { return s.id }

// Requests returns the number of requests begun: 1, plus one per Began.
func (s *Session) Requests() int { return s.n }

// Iterate counts one iteration of the agent's loop (a prompt, a model
// turn) in the request in force: agent.session.ended's iterations.
func (s *Session) Iterate() { s.iterations++ }

// Model is one model call as the foreign record states it: what it used,
// as far as the record says.
type Model struct {
	// Name is the model that answered ("" when the record does not say).
	Name string
	// Input, Output and Cached are its token counts (Cached: input tokens
	// read from a prompt cache, a part of Input); each nil when not
	// reported.
	Input, Output, Cached *int64
	Duration              time.Duration
}

// usage is a request's model calls summed; a count is known once a call
// reported it.
type usage struct {
	calls, ms             int64
	input, output, cached count
}

// count is a token count summed over the calls that reported it.
type count struct {
	n     int64
	known bool
}

func (c *count) add(n *int64) {
	if n != nil {
		c.n, c.known = c.n+*n, true
	}
}

// ptr is the count for the contract: nil when no call reported it.
func (c count) ptr() *int64 {
	if !c.known {
		return nil
	}
	n := c.n
	return &n
}

// Model emits agent.model.called for one model call of the request in
// force, at at (event id at.ID+"/model"), for the task in progress, and
// counts it: an iteration (Iterate), and what it used, summed into
// agent.session.ended's usage. A negative count is taken as not reported
// (Quality.ImpossibleUsage). A plan burst held (Tool) is not flushed: the
// model calls between a burst's plan calls are the burst's own, and the
// plan event comes after them.
func (s *Session) Model(ctx context.Context, at At, m Model) error {
	bad := false
	for _, n := range []**int64{&m.Input, &m.Output, &m.Cached} {
		if *n != nil && **n < 0 {
			*n, bad = nil, true
		}
	}
	if bad {
		s.quality.ImpossibleUsage++
	}
	s.iterations++
	s.usage.calls++
	s.usage.input.add(m.Input)
	s.usage.output.add(m.Output)
	s.usage.cached.add(m.Cached)
	ms := max(m.Duration.Milliseconds(), 0)
	s.usage.ms += ms
	d := events.ModelCalledData{Model: m.Name, InputTokens: m.Input, OutputTokens: m.Output,
		CachedInputTokens: m.Cached, DurationMS: ms}
	if task, ok := s.tr.Current(); ok {
		d.TaskID = &task.ID
	}
	return s.emit(ctx, at, "/model", events.ModelCalled, d)
}

// Planned applies a plan the agent stated other than by a tool call (an
// OpenTelemetry plan span's content): what was held is flushed first, and
// the plan goes through the core like a plan call's list, its events at at,
// with no control call.
func (s *Session) Planned(ctx context.Context, at At, p plandialect.Plan) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	return s.apply(ctx, at, p)
}

// Started reports whether Start was called.
func (s *Session) Started() bool { return s.started }

// Quality returns what the session could not use so far.
func (s *Session) Quality() Quality { return s.quality }

// Emitted returns the number of events sent.
func (s *Session) Emitted() int64 { return s.emitted }

// Plan returns the plan in force.
func (s *Session) Plan() []plandialect.Task { return s.tr.Plan() }

func (s *Session) emit(ctx context.Context, at At, suffix string, typ events.Type, data any) error {
	s.seq = max(at.Seq, s.seq+1)
	e, err := events.New(s.source, s.id, s.seq, typ, at.Time, data)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	e.ID = EventID(at.ID + suffix)
	if err := e.Validate(); err != nil {
		return fmt.Errorf("session %s: event id %q: %w", s.id, e.ID, err)
	}
	s.emitted++
	return s.sink.Send(ctx, e)
}

// Start emits agent.session.started; the requests a Began begins start
// with the same data.
func (s *Session) Start(ctx context.Context, at At, d events.SessionStartedData) error {
	s.started, s.start, s.startAt = true, d, at.Time
	return s.emit(ctx, at, "", events.SessionStarted, d)
}

// next ends the request in force, whose plan the agent finished, and
// begins the next one at at (event ids at.ID+"/end", at.ID+"/start").
func (s *Session) next(ctx context.Context, at At) error {
	if s.started {
		if err := s.ended(ctx, At{ID: at.ID + "/end", Time: at.Time, Seq: at.Seq}, events.OutcomeSuccess); err != nil {
			return err
		}
	}
	s.n++
	s.id = fmt.Sprintf("%s/%d", s.base, s.n)
	if len(s.id) > maxKey {
		s.id = hashed(s.id)
	}
	s.seq, s.iterations, s.replans, s.calls, s.failed = 0, 0, 0, 0, 0
	s.usage = usage{}
	s.taskCalls, s.taskFails = map[int64]int64{}, map[int64]int64{}
	if !s.started {
		return nil
	}
	s.iterations = 1 // the iteration that made the plan
	return s.Start(ctx, At{ID: at.ID + "/start", Time: at.Time, Seq: at.Seq}, s.start)
}

// Tool translates one tool call: a plan-tool call goes through the dialect
// core (agent.plan.created or agent.plan.updated, then agent.task.completed
// per completed task, then the call itself as a control call); so does a
// file tool call on a plan file (WithFiles), whose content goes through the
// Markdown dialect, until a plan-tool call has listed a task: from then on
// the plan tool is the session's plan and a plan-file call is an ordinary
// one (PlanFileSuperseded), so that no change of course is counted twice;
// any other call is agent.tool.called for the task in progress, with its
// hint. Event ids are at.ID plus a suffix ("/plan", "/done/<task id>",
// nothing for the call).
//
// A plan call is held until its burst ends: an incremental task tool's
// call (TaskCreate, TaskUpdate) or a control tool's (TaskList, TaskGet,
// ToolSearch) is a control call whose step is held; a whole-list plan
// call is a control call whose list replaces the one held. Any other call
// first ends the burst (Flush), so that the plan calls before it are
// classified as one.
func (s *Session) Tool(ctx context.Context, at At, c Call) error {
	if sd, ok := s.reg.LookupStep(c.Tool); ok {
		if err := s.step(ctx, at, sd, c); err != nil {
			return err
		}
		return s.called(ctx, at, c, nil, nil, true)
	}
	d, isPlan := s.reg.Lookup(c.Tool)
	if !isPlan {
		if err := s.Flush(ctx); err != nil {
			return err
		}
		switch {
		case s.files == nil:
		case s.toolPlanned:
			if s.onPlanFile(c) {
				s.quality.PlanFileSuperseded++
			}
		default:
			return s.file(ctx, at, c)
		}
		return s.work(ctx, at, c)
	}
	if err := s.plan(ctx, at, d, c); err != nil {
		return err
	}
	return s.called(ctx, at, c, nil, nil, true)
}

func (s *Session) plan(ctx context.Context, at At, d plandialect.Dialect, c Call) error {
	switch {
	case !c.OK:
		s.quality.PlanCallsFailed++
		return nil
	case c.Args == nil:
		s.quality.PlanCallsWithoutArguments++
		return nil
	}
	p, err := d.Parse(c.Args)
	if errors.Is(err, plandialect.ErrArguments) {
		s.quality.PlanCallsUnreadable++
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: parse %s: %w", s.id, c.Tool, err)
	}
	if p.Revision {
		// A SkillLite revision replaces the pending part: every call is one.
		if err := s.Flush(ctx); err != nil {
			return err
		}
		return s.apply(ctx, at, p)
	}
	if err := s.flushSteps(ctx); err != nil {
		return err
	}
	if s.held != nil && plandialect.Finishes(*s.held) {
		// The burst finished the request's plan: that is seen before
		// the next list, which may begin the next request.
		if err := s.flushPlan(ctx); err != nil {
			return err
		}
	}
	s.held, s.heldAt = &p, at
	return nil
}

// apply classifies one whole-list plan call through the core and emits
// what it decided.
func (s *Session) apply(ctx context.Context, at At, p plandialect.Plan) error {
	res, err := s.tr.Apply(p)
	if errors.Is(err, plandialect.ErrPlan) {
		s.quality.PlanCallsUnreadable++
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: apply a plan: %w", s.id, err)
	}
	if len(res.Tasks) > 0 {
		s.toolPlanned = true
	}
	// Incremental calls after a whole list work on that list.
	s.st = nil
	return s.result(ctx, at, "", res)
}

// step holds one incremental task call's step. A failed call changed
// nothing; a call whose arguments or result cannot be read, or which
// names a task the session never created, is counted and skipped.
func (s *Session) step(ctx context.Context, at At, d plandialect.StepDialect, c Call) error {
	if !c.OK {
		if d.Name() != plandialect.Control {
			s.quality.PlanCallsFailed++
		}
		return nil
	}
	st, err := d.ParseStep(c.Args, c.Result)
	switch {
	case errors.Is(err, plandialect.ErrArguments) && c.Args == nil:
		s.quality.PlanCallsWithoutArguments++
		return nil
	case errors.Is(err, plandialect.ErrArguments):
		s.quality.PlanCallsUnreadable++
		return nil
	case err != nil:
		return fmt.Errorf("session %s: parse %s: %w", s.id, c.Tool, err)
	case st.Op == plandialect.StepRead:
		return nil
	}
	if err := s.flushPlan(ctx); err != nil {
		return err
	}
	if s.st == nil {
		s.st = plandialect.NewStepTracker(s.tr)
	}
	if s.st.Finishes(st) {
		if err := s.flushSteps(ctx); err != nil {
			return err
		}
	}
	err = s.st.Step(st)
	if errors.Is(err, plandialect.ErrPlan) {
		s.quality.PlanCallsUnreadable++
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: apply %s: %w", s.id, c.Tool, err)
	}
	s.heldAt = at
	return nil
}

// Flush ends a burst of plan calls: the incremental task calls held since
// the last real call go through the core as one plan call, and so does the
// last whole-list plan call of the burst (a change undone by the next plan
// call is nothing; several changes are one replan); the events are emitted
// at the burst's last call. Tool calls it before every call that is not a
// plan, task or control tool's, End before the session's end; an adapter
// calls it where the agent's turn ends (Claude Code's Stop, a new prompt).
// Nothing happens when nothing is held.
func (s *Session) Flush(ctx context.Context) error {
	if err := s.flushPlan(ctx); err != nil {
		return err
	}
	return s.flushSteps(ctx)
}

// flushPlan applies the held whole-list plan call, if any.
func (s *Session) flushPlan(ctx context.Context) error {
	if s.held == nil {
		return nil
	}
	p := *s.held
	s.held = nil
	return s.apply(ctx, s.heldAt, p)
}

// flushSteps classifies the held incremental steps, if any.
func (s *Session) flushSteps(ctx context.Context) error {
	if s.st == nil {
		return nil
	}
	res, ok := s.st.Flush()
	if !ok {
		return nil
	}
	if len(res.Tasks) > 0 {
		s.toolPlanned = true
	}
	return s.result(ctx, s.heldAt, "", res)
}

// onPlanFile reports whether c is a file tool call that touches a plan file.
func (s *Session) onPlanFile(c Call) bool {
	if !s.files.tools[c.Tool] || c.Args == nil {
		return false
	}
	call, ok, err := s.files.files.Operation(c.Tool, c.Args)
	return err == nil && ok && len(call.Ops) > 0
}

// file translates a call that may be a plan-file operation. A call that
// touched only plan files is a control call, as a plan-tool call is; one
// that also touched other files is a real call too. A failed call changed
// nothing; a file tool call whose arguments are missing or unreadable may
// have changed a plan file, so every plan file's content is unknown after it.
func (s *Session) file(ctx context.Context, at At, c Call) error {
	if !s.files.tools[c.Tool] {
		return s.work(ctx, at, c)
	}
	if c.Args == nil {
		s.quality.FileCallsUnread++
		s.forget()
		return s.work(ctx, at, c)
	}
	if !c.OK {
		call, ok, err := s.files.files.Operation(c.Tool, c.Args)
		if err != nil || !ok {
			return s.work(ctx, at, c)
		}
		s.quality.PlanFileCallsFailed++
		if len(call.Other) > 0 {
			return s.work(ctx, at, c)
		}
		return s.called(ctx, at, c, nil, nil, true)
	}
	out, ok, err := s.ft.Call(c.Tool, c.Args)
	if errors.Is(err, plandialect.ErrArguments) {
		s.quality.FileCallsUnreadable++
		s.forget()
		return s.work(ctx, at, c)
	}
	if err != nil {
		return fmt.Errorf("session %s: plan file %s: %w", s.id, c.Tool, err)
	}
	if !ok {
		return s.work(ctx, at, c)
	}
	for i, r := range out.Results {
		suffix := ""
		if i > 0 {
			suffix = fmt.Sprintf("/%d", i)
		}
		switch {
		case r.Applied:
			if err := s.result(ctx, at, suffix, r.Result); err != nil {
				return err
			}
		case r.Quality == plandialect.QualityUnknownPrior:
			s.quality.PlanFileUnknownPrior++
		case r.Quality == plandialect.QualityMismatch:
			s.quality.PlanFileMismatch++
		case r.Quality == plandialect.QualityUnreadable:
			s.quality.PlanFileUnreadable++
		case r.Quality == plandialect.QualityNoTasks:
			s.quality.PlanFileNoTasks++
		case r.Quality == plandialect.QualityDeleted:
			s.quality.PlanFileDeleted++
		}
	}
	if len(out.Other) > 0 {
		return s.work(ctx, at, c)
	}
	return s.called(ctx, at, c, nil, nil, true)
}

// result emits the events of what the core decided: agent.plan.created or
// agent.plan.updated ("/plan"), then agent.task.completed per completed task
// ("/done/<id>"); suffix tells apart several results of one call.
func (s *Session) result(ctx context.Context, at At, suffix string, res plandialect.Result) error {
	var err error
	switch res.Kind {
	case plandialect.Began:
		if err := s.next(ctx, at); err != nil {
			return err
		}
		fallthrough
	case plandialect.Created:
		err = s.emit(ctx, at, suffix+"/plan", events.PlanCreated, res.PlanCreated())
	case plandialect.Replanned:
		s.replans++
		err = s.emit(ctx, at, suffix+"/plan", events.PlanUpdated, res.PlanUpdated(events.TriggerModel))
	}
	if err != nil {
		return err
	}
	for _, id := range res.Completed {
		d := events.TaskCompletedData{TaskID: id, Completion: events.CompletionSuccess, ToolCalls: s.taskCalls[id]}
		if s.taskFails[id] > 0 {
			d.Completion = events.CompletionPartialSuccess
		}
		if err := s.emit(ctx, at, fmt.Sprintf("%s/done/%d", suffix, id), events.TaskCompleted, d); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) work(ctx context.Context, at At, c Call) error {
	task, ok := s.tr.Current()
	if !ok {
		return s.called(ctx, at, c, nil, nil, false)
	}
	s.taskCalls[task.ID]++
	if !c.OK {
		s.taskFails[task.ID]++
	}
	var hint *string
	if task.Hint != "" {
		hint = &task.Hint
	}
	return s.called(ctx, at, c, &task.ID, hint, false)
}

func (s *Session) called(ctx context.Context, at At, c Call, task *int64, hint *string, control bool) error {
	d := events.ToolCalledData{TaskID: task, Tool: cmp.Or(c.Name, c.Tool), Hint: hint, OK: c.OK,
		DurationMS: max(c.Duration.Milliseconds(), 0), Control: control, ArgsDigest: events.ArgsDigest(c.Args)}
	if !c.OK {
		d.Error, d.ErrorKind = cut(c.Error), c.Kind
		if d.Error == "" {
			d.Error = c.Kind
		}
	}
	s.calls++
	if !c.OK {
		s.failed++
	}
	return s.emit(ctx, at, "", events.ToolCalled, d)
}

// Outcome is the outcome of a request that did not end in an error and
// declared none, from the only evidence left (call it after Flush): success when the agent, by
// its own account, completed every task of its plan
// (plandialect.Tracker.Finished), else unknown. A request without a plan,
// or with tasks still pending, shows nothing of how it went.
func (s *Session) Outcome() events.Outcome {
	if s.tr.Finished() {
		return events.OutcomeSuccess
	}
	return events.OutcomeUnknown
}

// End flushes what is held and emits agent.session.ended for the request
// in force with outcome ("" for the one Outcome judges, after the flush)
// and its totals: replans as the core counted them, tool calls and failed
// ones as emitted, the iterations counted (Iterate), and the time since the
// request started.
func (s *Session) End(ctx context.Context, at At, outcome events.Outcome) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	if outcome == "" {
		outcome = s.Outcome()
	}
	return s.ended(ctx, at, outcome)
}

func (s *Session) ended(ctx context.Context, at At, outcome events.Outcome) error {
	d := events.SessionEndedData{
		Outcome: outcome, Replans: s.replans, ToolCalls: s.calls, FailedToolCalls: s.failed,
		Iterations: s.iterations, DurationMS: max(at.Time.Sub(s.startAt).Milliseconds(), 0),
	}
	if u := s.usage; u.calls > 0 {
		d.Usage = &events.Usage{ModelCalls: u.calls, InputTokens: u.input.ptr(), OutputTokens: u.output.ptr(),
			CachedInputTokens: u.cached.ptr(), ModelMS: u.ms}
	}
	return s.emit(ctx, at, "", events.SessionEnded, d)
}

// maxKey is the longest event id and session id of the contract.
const maxKey = 128

// EventID returns id if it is a valid event id (1 to 128 printable ASCII
// characters without spaces), else its hash: foreign ids are used as they
// are when they fit, and stay deterministic when they do not.
func EventID(id string) string {
	if id == "" || len(id) > maxKey || strings.IndexFunc(id, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return hashed(id)
	}
	return id
}

func hashed(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(h[:])
}

// Tail returns the end of s that an error text takes (its last 4096
// characters): the part of a command's output that says why it failed.
func Tail(s string) string {
	r := []rune(s)
	if len(r) <= maxError {
		return s
	}
	return string(r[len(r)-maxError:])
}

// cut returns s cut to maxError characters.
func cut(s string) string {
	r := []rune(s)
	if len(r) <= maxError {
		return s
	}
	return string(r[:maxError])
}
