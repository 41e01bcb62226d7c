package skilllite

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
)

// Name is the adapter's -agent value.
const Name = "skilllite"

// Adapter is SkillLite's agent-rpc lines as an adapter.Adapter.
type Adapter struct {
	origin                   adapter.Origin
	cfg                      Config
	tools                    string
	transcripts              string
	feedback, feedbackReport string
	readDecisions            func(context.Context, string) ([]Decision, error)
}

var _ adapter.Adapter = (*Adapter)(nil)

// NewAdapter returns the adapter; readDecisions reads SkillLite's
// feedback.sqlite for -feedback (package feedbackdb's ReadDecisions, which
// the registry passes: the SQLite driver stays out of this package).
func NewAdapter(readDecisions func(ctx context.Context, path string) ([]Decision, error)) *Adapter {
	return &Adapter{readDecisions: readDecisions}
}

func (a *Adapter) Name() string         { return Name }
func (a *Adapter) Reads() adapter.Reads { return adapter.JSONLines }

func (a *Adapter) Help() string {
	return `  -agent skilllite     SkillLite's agent-rpc output (docs/bridge-skilllite.md): the
                       JSON lines it writes on stdout, {"data": …, "event": …}; a
                       recording may also hold the requests it read,
                       {"method": "agent_chat", "params": {"message": …, "session_key": …}}.
                       Each turn (the lines up to a done, or a request) becomes one
                       session, even when turns share a session_key:

    first task_plan of the turn          agent.plan.created     origin fallback for SkillLite's
                                                                fallback plan (with the request)
    update_task_plan + its task_plan     agent.plan.updated     kept/dropped as SkillLite's handler;
                                         agent.hint.stripped    per proposed hint it removed
    update_task_plan refused             agent.plan.updated     valid false
    tool_call + tool_result              agent.tool.called      for the current task, its hint;
                                                                a result SkillLite suppressed as a
                                                                duplicate repeats the earlier one;
                                                                a skipped call is no call
    task_progress                        agent.task.completed
    -depth-limit calls on one task       agent.depth_limit.reached
    done                                 agent.session.ended    outcome from completion_type,
                                                                iterations = llm_usage lines
    error | input ends mid-turn          agent.session.ended    outcome failure | aborted

                       A turn with neither a task nor a tool call is a plain answer:
                       counted in the summary, not a session. Other events
                       (text_chunk, command_output, …) are ignored. A turn's events
                       go out when it ends.
`
}

func (a *Adapter) Flags(fs *flag.FlagSet) {
	a.origin.Flags(fs, Name)
	fs.StringVar(&a.cfg.AgentVersion, "agent-version", "unknown", "the agent `version` the sessions give (agent_version)")
	fs.StringVar(&a.tools, "tools", "", "comma-separated tool `names` every session announces; tool names seen in the stream are added")
	fs.Int64Var(&a.cfg.DepthLimit, "depth-limit", DefaultDepthLimit, "SkillLite's max_tool_calls_per_task: executed `calls` on one task that make agent.depth_limit.reached")
	fs.StringVar(&a.transcripts, "transcripts", "", "SkillLite's transcripts `dir` (~/.skilllite/transcripts): tool calls without a timestamp get theirs, joined by tool_call_id")
	fs.StringVar(&a.feedback, "feedback", "", "SkillLite's feedback.sqlite `file` (~/.skilllite/chat/feedback.sqlite): its decisions are cross-checked with the bridged turns")
	fs.StringVar(&a.cfg.Workspace, "workspace", "", "the SkillLite workspace `dir` the sessions run in: each session reports the holdout arm `analyze rules -workspace` recorded there (.skilllite/evosignal_assignment.json)")
	fs.StringVar(&a.feedbackReport, "feedback-report", "", "write the -feedback cross-check as JSON to `file` (- for stderr)")
}

func (a *Adapter) Validate() error {
	for _, name := range strings.Split(a.tools, ",") {
		if name = strings.TrimSpace(name); name != "" {
			a.cfg.Tools = append(a.cfg.Tools, name)
		}
	}
	var errs []error
	errs = append(errs, a.origin.Validate())
	a.cfg.Agent, a.cfg.Source, a.cfg.Model = a.origin.Agent, a.origin.Source, a.origin.Model
	errs = append(errs, a.cfg.Validate())
	if a.feedbackReport != "" && a.feedback == "" {
		errs = append(errs, errors.New("-feedback-report needs -feedback FILE"))
	}
	return errors.Join(errs...)
}

func (a *Adapter) Open(ctx context.Context, env adapter.Env) (adapter.Start, error) {
	cfg := a.cfg
	cfg.MaxRecord = env.MaxRecord
	if a.transcripts != "" {
		tr, err := ReadTranscripts(a.transcripts)
		if err != nil {
			return nil, err
		}
		env.Log.Info("transcripts read", "dir", a.transcripts, "calls", tr.Calls, "ambiguous", tr.Ambiguous, "malformed", tr.Malformed)
		cfg.Transcripts = tr
	}
	t := &translation{a: a, env: env}
	if a.feedback != "" {
		// Read before bridging: a file that cannot be read stops the run
		// before anything is sent.
		var err error
		if t.decisions, err = a.readDecisions(ctx, a.feedback); err != nil {
			return nil, err
		}
		cfg.OnTurn = func(c TurnCounts) { t.turns = append(t.turns, c) }
	}
	return func(sink agent.Sink) (adapter.Translation, error) {
		t.tr = NewTranslator(cfg, sink, env.Now)
		return t, nil
	}, nil
}

type translation struct {
	a         *Adapter
	env       adapter.Env
	tr        *Translator
	decisions []Decision
	turns     []TurnCounts
}

func (t *translation) Read(ctx context.Context, in io.Reader) error {
	return t.tr.ReadLines(ctx, in, func(e *LineError) {
		t.env.Log.Warn("malformed line skipped", "line", e.Line, "err", e.Err)
	}, t.env.Flush)
}

func (t *translation) Close(ctx context.Context) error { return t.tr.Close(ctx) }

func (t *translation) Counts() adapter.Counts {
	c := t.tr.Stats()
	return adapter.Counts{Records: c.Lines, Events: c.Events, Malformed: c.Malformed}
}

func (t *translation) Report(w io.Writer) error {
	c := t.tr.Stats()
	adapter.WriteSummary(w, fmt.Sprintf("%d lines read, %d events emitted, %d sessions, %d plain answers, %d ignored, %d malformed; "+
		"%d calls skipped, %d results suppressed, %d turns whose tool_calls differ from the agent's",
		c.Lines, c.Events, c.Sessions, c.PlainAnswers, c.Ignored, c.Malformed, c.Skipped, c.Suppressed, c.CountMismatches), c.Quality.Notes())
	if t.a.feedback == "" {
		return nil
	}
	return t.a.reportFeedback(CrossCheck(t.turns, t.decisions), w)
}

// reportFeedback writes the -feedback cross-check: a summary line and a line
// per matched turn whose counts differ on w, and the whole report as JSON to
// -feedback-report.
func (a *Adapter) reportFeedback(r FeedbackReport, w io.Writer) error {
	fmt.Fprintf(w, "%sfeedback.sqlite: %d decisions read; %d of %d turns with a tool call matched, %d of them with differing counts, %d unmatched\n",
		adapter.ReportPrefix, r.Decisions, len(r.Matched), r.Recorded, r.Differing, len(r.UnmatchedTurns))
	for _, m := range r.Matched {
		if len(m.Diffs) == 0 {
			continue
		}
		var ds []string
		for _, d := range m.Diffs {
			ds = append(ds, fmt.Sprintf("%s bridge %v skilllite %v", d.Field, d.Bridge, d.SkillLite))
		}
		fmt.Fprintf(w, "%sfeedback.sqlite: turn ending at line %d (session %s) vs decision %d: %s\n",
			adapter.ReportPrefix, m.Turn.Line, m.Turn.Session, m.Decision.ID, strings.Join(ds, ", "))
	}
	if a.feedbackReport == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode feedback report: %w", err)
	}
	b = append(b, '\n')
	if a.feedbackReport == "-" {
		_, err = w.Write(b)
		return err
	}
	if err := os.WriteFile(a.feedbackReport, b, 0o644); err != nil {
		return fmt.Errorf("write feedback report: %w", err)
	}
	return nil
}
