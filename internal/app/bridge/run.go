package bridge

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/adapter/skilllite/feedbackdb"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/output"
)

// usage is the help of bridge before its flags, naming the commands as the
// user runs them under ctx.
func usage(ctx context.Context) string {
	return fmt.Sprintf(usageFormat, cli.Cmd(ctx, "bridge"), cli.Cmd(ctx, "ingest"))
}

// usageFormat is usage with the commands as %[1]s (bridge) and %[2]s
// (ingest).
const usageFormat = `Usage: %[1]s -agent NAME [-in FILE] (-out FILE | -nats URL) [flags]

  -agent otel          OTLP JSON lines (the collector's file exporter: one
                       ExportTraceServiceRequest per line) of OpenTelemetry
                       GenAI spans; one session per trace (docs/otel.md)
  -agent claude-code   Claude Code hook inputs, as the hook in
                       docs/claude-code.md appends them; one session per session_id;
                       Write/Edit/MultiEdit of a plan file (task_plan.md, todo.md,
                       .cursor/plans/*.plan.md) are plan operations
  -agent cursor        Cursor hook inputs (internal/adapter/cursor/testdata/README.md);
                       one session per conversation_id, the plan read from plan
                       files (afterFileEdit, beforeReadFile)
  -agent NAME          anything else: SkillLite agent-rpc, NAME the agent name

-source does not apply to otel (each session's source is <agent>/otel);
-model applies to claude-code and cursor too; -tools, -agent-version,
-depth-limit, -transcripts and -feedback to SkillLite only.

Bridges SkillLite's agent-rpc output into evosignal events (CloudEvents v1,
see schema/README.md). It reads JSON lines as agent-rpc writes them on
stdout, {"data": …, "event": …}; a recording may also hold the requests it
read, {"method": "agent_chat", "params": {"message": …, "session_key": …}}.
Each turn (the lines up to a done, or a request) becomes one session, even
when turns share a session_key:

  first task_plan of the turn            agent.plan.created     origin fallback for SkillLite's
                                                                 fallback plan (with the request)
  update_task_plan + its task_plan       agent.plan.updated     kept/dropped as SkillLite's handler;
                                         agent.hint.stripped    per proposed hint it removed
  update_task_plan refused               agent.plan.updated     valid false
  tool_call + tool_result                agent.tool.called      for the current task, its hint;
                                                                 a result SkillLite suppressed as a
                                                                 duplicate repeats the earlier one;
                                                                 a skipped call is no call
  task_progress                          agent.task.completed
  -depth-limit calls on one task         agent.depth_limit.reached
  done                                   agent.session.ended    outcome from completion_type,
                                                                 iterations = llm_usage lines
  error | input ends mid-turn            agent.session.ended    outcome failure | aborted

A turn with neither a task nor a tool call is a plain answer: counted in the
summary, not a session. Other events (text_chunk, command_output, …) are
ignored. Session and event ids derive from the turn's lines, so bridging the
same input twice stores nothing new. Malformed lines are reported on stderr
with their line number and skipped; a summary line ends the run. A turn's
events go out when it ends. Events go to NATS JetStream with -nats (the
stream must capture <prefix>.<agent>, as the one ingest creates does), or as
JSON lines to -out. The events' source is <agent>/bridge/<hostname> unless
-source says otherwise. See docs/bridge-skilllite.md.

Examples:
  %[1]s -agent skilllite -in agent-rpc.jsonl -out - | %[2]s -file - -db evosignal.duckdb
  # backfill with the times of SkillLite's transcripts
  %[1]s -agent skilllite -in agent-rpc.jsonl -transcripts ~/.skilllite/transcripts -out - | %[2]s -file -
  # cross-check each turn's counts with SkillLite's own feedback.sqlite
  %[1]s -agent skilllite -in agent-rpc.jsonl -feedback ~/.skilllite/chat/feedback.sqlite -feedback-report check.json -out - | %[2]s -file -
  # live: copy agent-rpc's stdout to the bridge; its stdin stays the client's
  client | skilllite agent-rpc | tee -a agent-rpc.jsonl | %[1]s -agent skilllite -nats nats://127.0.0.1:4222

Flags:
`

type options struct {
	in, out, natsURL, prefix string
	transcripts              string
	feedback, feedbackReport string
	conn                     bus.ConnConfig
	cfg                      skilllite.Config
	logLevel, logFormat      string
}

func parse(ctx context.Context, args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	var tools string
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage(ctx))
		fs.PrintDefaults()
	}
	fs.StringVar(&o.cfg.Agent, "agent", "", "agent `name` (required): the first segment of source and the subject <prefix>.<name>")
	fs.StringVar(&o.cfg.Source, "source", "", "event `source` (default <agent>/bridge/<hostname>); its first segment must be -agent")
	fs.StringVar(&o.cfg.AgentVersion, "agent-version", "unknown", "agent_version of the sessions")
	fs.StringVar(&o.cfg.Model, "model", "unknown", "model of the sessions, unless a request's params.config.model names one")
	fs.StringVar(&tools, "tools", "", "comma-separated tool `names` every session announces; tool names seen in the stream are added")
	fs.Int64Var(&o.cfg.DepthLimit, "depth-limit", skilllite.DefaultDepthLimit, "SkillLite's max_tool_calls_per_task: executed `calls` on one task that make agent.depth_limit.reached")
	fs.StringVar(&o.transcripts, "transcripts", "", "SkillLite's transcripts `dir` (~/.skilllite/transcripts): tool calls without a timestamp get theirs, joined by tool_call_id")
	fs.StringVar(&o.feedback, "feedback", "", "SkillLite's feedback.sqlite `file` (~/.skilllite/chat/feedback.sqlite): its decisions are cross-checked with the bridged turns")
	fs.StringVar(&o.feedbackReport, "feedback-report", "", "write the -feedback cross-check as JSON to `file` (- for stderr)")
	fs.StringVar(&o.in, "in", "-", "read SkillLite JSON lines from `file` (- for stdin)")
	fs.StringVar(&o.out, "out", "", "write the events as JSON lines to `file` (- for stdout); excludes -nats")
	fs.StringVar(&o.natsURL, "nats", "", "publish the events to NATS JetStream at `URL`(s), comma-separated; excludes -out")
	fs.StringVar(&o.prefix, "prefix", "evo", "subject `prefix`: events go to <prefix>.<agent>")
	cli.ConnFlags(fs, &o.conn)
	cli.LogFlags(fs, &o.logLevel, &o.logFormat, "info")
	if err := cli.Parse(ctx, fs, args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bridge: unexpected arguments %q\n", fs.Args())
		return nil, errUsage
	}
	for _, name := range strings.Split(tools, ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.cfg.Tools = append(o.cfg.Tools, name)
		}
	}
	o.conn.URL, o.conn.Name = o.natsURL, "evosignal-bridge"
	if err := o.validate(); err != nil {
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return nil, errUsage
	}
	return o, nil
}

// validate reports every problem of the options at once, and fills in the
// default source.
func (o *options) validate() error {
	var errs []error
	switch {
	case o.cfg.Agent == agentOTel && o.cfg.Source != "":
		errs = append(errs, errors.New("-source does not apply to -agent otel: each session's source is <agent>/otel, the agent named by its spans"))
	case o.cfg.Agent == agentOTel:
	default:
		if o.cfg.Source == "" && o.cfg.Agent != "" {
			o.cfg.Source = skilllite.DefaultSource(o.cfg.Agent)
		}
		errs = append(errs, o.cfg.Validate())
	}
	if (o.feedback != "" || o.feedbackReport != "") && (o.cfg.Agent == agentOTel || o.cfg.Agent == agentClaudeCode) {
		errs = append(errs, fmt.Errorf("-feedback and -feedback-report apply to SkillLite only, not -agent %s", o.cfg.Agent))
	}
	if o.feedbackReport != "" && o.feedback == "" {
		errs = append(errs, errors.New("-feedback-report needs -feedback FILE"))
	}
	switch {
	case o.out == "" && o.natsURL == "":
		errs = append(errs, errors.New("say where the events go: -out FILE (- for stdout) or -nats URL"))
	case o.out != "" && o.natsURL != "":
		errs = append(errs, errors.New("-out and -nats exclude each other"))
	case o.natsURL != "":
		errs = append(errs, o.conn.Validate())
		if o.prefix == "" || strings.ContainsAny(o.prefix, "*> \t\n") || slices.Contains(strings.Split(o.prefix, "."), "") {
			errs = append(errs, fmt.Errorf("-prefix %q is not a literal subject", o.prefix))
		}
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse(ctx, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := cli.NewLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	if o.transcripts != "" {
		tr, err := skilllite.ReadTranscripts(o.transcripts)
		if err != nil {
			return err
		}
		log.Info("transcripts read", "dir", o.transcripts, "calls", tr.Calls, "ambiguous", tr.Ambiguous, "malformed", tr.Malformed)
		o.cfg.Transcripts = tr
	}
	in := stdin
	if o.in != "-" {
		f, err := os.Open(o.in)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	out, err := openOutput(o, stdout, log)
	if err != nil {
		return err
	}
	switch o.cfg.Agent {
	case agentOTel:
		return bridgeOTel(ctx, in, out, stderr, log)
	case agentClaudeCode:
		return bridgeClaudeCode(ctx, o, in, out, stderr, log)
	case agentCursor:
		return bridgeCursor(ctx, o, in, out, stderr, log)
	}
	var flush func() error
	if out.Buffered() {
		flush = out.Flush
	}
	var decisions []skilllite.Decision
	var turns []skilllite.TurnCounts
	if o.feedback != "" {
		// Read before bridging: a file that cannot be read stops the run
		// before anything is sent.
		if decisions, err = feedbackdb.ReadDecisions(ctx, o.feedback); err != nil {
			out.Close(ctx)
			return err
		}
		o.cfg.OnTurn = func(c skilllite.TurnCounts) { turns = append(turns, c) }
	}
	tr := skilllite.NewTranslator(o.cfg, out, time.Now)
	readErr := tr.ReadLines(ctx, in, func(e *skilllite.LineError) {
		log.Warn("malformed line skipped", "line", e.Line, "err", e.Err)
	}, flush)
	// Whatever stopped the input, end the open turn and deliver what was
	// translated; after an interrupt too, within a bound.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), output.CloseTimeout)
	defer cancel()
	closeErr := tr.Close(final)
	outErr := out.Close(final)
	c := tr.Stats()
	fmt.Fprintf(stderr, "bridge: %d lines read, %d events emitted, %d sessions, %d plain answers, %d ignored, %d malformed; "+
		"%d calls skipped, %d results suppressed, %d turns whose tool_calls differ from the agent's\n",
		c.Lines, c.Events, c.Sessions, c.PlainAnswers, c.Ignored, c.Malformed, c.Skipped, c.Suppressed, c.CountMismatches)
	for _, n := range c.Quality.Notes() {
		fmt.Fprintf(stderr, "bridge: data quality: %s\n", n)
	}
	var fbErr error
	if o.feedback != "" {
		fbErr = reportFeedback(o, skilllite.CrossCheck(turns, decisions), stderr)
	}
	return errors.Join(readErr, closeErr, outErr, fbErr)
}
