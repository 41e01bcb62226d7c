package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/events"
)

const usage = `Usage: bridge -agent NAME [-in FILE] (-out FILE | -nats URL) [flags]

Bridges SkillLite's agent-rpc output into evosignal events (CloudEvents v1,
see schema/README.md). It reads JSON lines: the events SkillLite writes,
{"event": …, "data": …}, and, in a recorded transcript, the requests it read,
{"method": "agent_chat", "params": {"message": …, "session_key": …}}, in any
mix. Each turn (a request, or the events up to a done) becomes one session
with a fresh id, even when turns share a session_key:

  agent_chat request (or first event)   agent.session.started  goal = the message
  first task_plan of the turn           agent.plan.created
  later task_plan / update_task_plan    agent.plan.updated     reason = the call's "reason",
                                                              rejected when the call failed
  tool_call + tool_result               agent.tool.called      for the current task, its hint
  task_progress / complete_task         agent.task.completed
  done                                  agent.session.ended    outcome from completion_type
                                                              or task_completed
  error | input ends mid-turn           agent.session.ended    outcome failure | aborted

Other events (text_chunk, usage, …) are ignored. Malformed lines are reported
on stderr with their line number and skipped; a summary line ends the run.
Events go to NATS JetStream with -nats (the stream must capture
<prefix>.<agent>, as the one ingest creates does), or as JSON lines to -out.
The events' source is <agent>/bridge/<hostname> unless -source says otherwise.

Examples:
  bridge -agent skilllite -in transcript.jsonl -out - | ingest -file - -db evosignal.duckdb
  skilllite agent-rpc < requests.jsonl | bridge -agent skilllite -model qwen2.5-coder-32b \
      -tools read_file,write_file,run_command,complete_task,update_task_plan -nats nats://127.0.0.1:4222

Flags:
`

// maxLineBytes bounds an input line; a longer one is reported and skipped.
const maxLineBytes = 64 << 20

var agentName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

type options struct {
	in, out, natsURL, prefix string
	conn                     bus.ConnConfig
	cfg                      translatorConfig
	logLevel, logFormat      string
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	var tools string
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.cfg.Agent, "agent", "", "agent `name` (required): the first segment of source and the subject <prefix>.<name>")
	fs.StringVar(&o.cfg.Source, "source", "", "event `source` (default <agent>/bridge/<hostname>); its first segment must be -agent")
	fs.StringVar(&o.cfg.AgentVersion, "agent-version", "unknown", "agent_version of the sessions")
	fs.StringVar(&o.cfg.Model, "model", "unknown", "model of the sessions, unless a request's params.config.model names one")
	fs.StringVar(&tools, "tools", "", "comma-separated tool `names` every session announces; tool names seen in the stream are added")
	fs.StringVar(&o.in, "in", "-", "read SkillLite JSON lines from `file` (- for stdin)")
	fs.StringVar(&o.out, "out", "", "write the events as JSON lines to `file` (- for stdout); excludes -nats")
	fs.StringVar(&o.natsURL, "nats", "", "publish the events to NATS JetStream at `URL`(s), comma-separated; excludes -out")
	fs.StringVar(&o.prefix, "prefix", "evo", "subject `prefix`: events go to <prefix>.<agent>")
	cli.ConnFlags(fs, &o.conn)
	cli.LogFlags(fs, &o.logLevel, &o.logFormat, "info")
	if err := fs.Parse(args); err != nil {
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
	case o.cfg.Agent == "":
		errs = append(errs, errors.New("-agent is required"))
	case !agentName.MatchString(o.cfg.Agent):
		errs = append(errs, fmt.Errorf("-agent %q: want letters, digits, '_' or '-'", o.cfg.Agent))
	default:
		if o.cfg.Source == "" {
			o.cfg.Source = o.cfg.Agent + "/bridge/" + hostSegment()
		}
		if err := checkSource(o.cfg.Source, o.cfg.Agent); err != nil {
			errs = append(errs, err)
		}
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

// checkSource reports whether source is a valid event source of agent.
func checkSource(source, agentName string) error {
	if a := events.AgentOf(source); a != agentName {
		return fmt.Errorf("-source %q: its first segment %q is not the -agent name %q", source, a, agentName)
	}
	_, err := events.New(source, "check", 1, events.SessionEnded, time.Now(), agent.SessionEnded{Outcome: events.OutcomeSuccess})
	if ee := (*events.Error)(nil); errors.As(err, &ee) {
		return fmt.Errorf("-source %q: %s", source, ee.Msg)
	}
	return err
}

// hostSegment is the host name as a source path segment: printable ASCII
// without '/' or spaces.
func hostSegment() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	h = strings.Map(func(r rune) rune {
		if r > ' ' && r <= '~' && r != '/' {
			return r
		}
		return '-'
	}, h)
	if len(h) > 128 {
		h = h[:128]
	}
	return h
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
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
	tr := newTranslator(o.cfg, out.sink, time.Now)
	pumpErr := pump(ctx, tr, newLineReader(in, maxLineBytes), out, log)
	// Whatever stopped the input, end the open turn and deliver what was
	// translated; after an interrupt too, within a bound.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	closeErr := tr.Close(final)
	outErr := out.close(final)
	c := tr.Stats()
	fmt.Fprintf(stderr, "bridge: %d lines read, %d events emitted, %d sessions, %d ignored, %d malformed\n",
		c.Lines, c.Events, c.Sessions, c.Ignored, c.Malformed)
	return errors.Join(pumpErr, closeErr, outErr)
}

// pump feeds the input to tr line by line until it ends, ctx is done, or the
// output fails. Malformed lines are logged and skipped.
func pump(ctx context.Context, tr *translator, lr *lineReader, out *output, log *slog.Logger) error {
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before line %d: %w", n, err)
		}
		raw, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", n, err)
		}
		if tooLong {
			err = tr.TooLong(n, maxLineBytes)
		} else {
			err = tr.Line(ctx, n, raw)
		}
		if le := (*lineError)(nil); errors.As(err, &le) {
			log.Warn("malformed line skipped", "line", le.Line, "err", le.Err)
		} else if err != nil {
			return err
		}
		// Before waiting for more input, let what was emitted out: a live
		// pipe should not sit on a full session's events.
		if out.flush != nil && !lr.buffered() {
			if err := out.flush(); err != nil {
				return fmt.Errorf("write events: %w", err)
			}
		}
	}
}

// output is where the events go.
type output struct {
	sink  agent.Sink
	flush func() error                // writes out what is buffered; nil if nothing is
	close func(context.Context) error // delivers the rest and releases
}

func openOutput(o *options, stdout io.Writer, log *slog.Logger) (*output, error) {
	if o.out != "" {
		return openJSONL(o.out, stdout)
	}
	nc, err := bus.Connect(o.conn, log)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream on %s: %w", o.natsURL, err)
	}
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{Prefix: o.prefix})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &output{sink: pub, close: func(ctx context.Context) error {
		defer nc.Close()
		if err := pub.Close(ctx); err != nil {
			return fmt.Errorf("publish to %s: %w", pub.Subject(o.cfg.Source), err)
		}
		return nil
	}}, nil
}

func openJSONL(name string, stdout io.Writer) (*output, error) {
	if name == "-" {
		w := agent.NewJSONLWriter(stdout)
		return &output{sink: w, flush: w.Flush, close: func(context.Context) error {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("write events: %w", err)
			}
			return nil
		}}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := agent.NewJSONLWriter(f)
	return &output{sink: w, flush: w.Flush, close: func(context.Context) error {
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write events to %s: %w", name, err)
		}
		return nil
	}}, nil
}
