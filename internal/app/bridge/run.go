package bridge

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/adapter/registry"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/output"
)

// usage is the help of bridge before its flags, naming the commands as the
// user runs them under ctx, with every adapter's entry.
func usage(ctx context.Context, adapters []adapter.Adapter) string {
	var entries strings.Builder
	for i, a := range adapters {
		if i > 0 {
			entries.WriteString("\n")
		}
		entries.WriteString(a.Help())
	}
	return fmt.Sprintf(usageFormat, cli.Cmd(ctx, "bridge"), cli.Cmd(ctx, "ingest"), entries.String())
}

// usageFormat is usage with the commands as %[1]s (bridge) and %[2]s
// (ingest), the adapters' entries as %[3]s.
const usageFormat = `Usage: %[1]s -agent NAME [-in FILE|DIR] (-out FILE | -nats URL) [flags]
       %[1]s -agent NAME -in DIR|FILE -follow [-state FILE] -nats URL [flags]

Bridges what a foreign agent writes into evosignal events (CloudEvents v1,
see schema/README.md); -agent names the format:

%[3]s
Session and event ids and times derive from the records, so bridging the
same input twice stores nothing new (hook records without a time take their
file's modification time; read from a pipe, the clock's, and a second run's
events are then dead-lettered as conflicting duplicates). The outcome of a
session rests on evidence only (every planned task completed, an error
end, the agent's own verdict), else it is unknown. Malformed records are
reported on stderr with their line or record number and skipped; an input
of which no record could be used, or most records were malformed, is an
error (naming the format of its first record, when the bridge knows it),
and so is an empty one; a long
backfill logs its progress; a summary line ends the run. Events go to NATS JetStream with -nats (the
stream must capture <prefix>.<agent>, as the one ingest creates does), or as
JSON lines to -out. A flag that -agent does
not take is refused.

-follow keeps reading -in (a directory, for an adapter that reads one, or a
file) and publishes to -nats what is appended, live, until interrupted
(Ctrl-C or SIGTERM: what was read is delivered and -state saved). The tree
is polled every -poll (no file-system events: it works on every
filesystem, new subdirectories included); new files are picked up, and only
complete lines are read: a partial last line waits for its newline. Each
file is translated on its own, from its start. -state records, per file,
how far it was read, how many of its events JetStream acknowledged and its
first bytes: a restart translates each file again and publishes only the
events past those, so nothing is sent twice (a file truncated or replaced
is read as new). What a translation would emit only at the end of its
input is not emitted while following: a file never ends, a session ends
when the file says so (docs/follow.md). The events' source is <name>/bridge/<hostname> unless
-source says otherwise.

Examples:
  %[1]s -agent skilllite -in agent-rpc.jsonl -out - | %[2]s -file - -db evosignal.duckdb
  # backfill with the times of SkillLite's transcripts
  %[1]s -agent skilllite -in agent-rpc.jsonl -transcripts ~/.skilllite/transcripts -out - | %[2]s -file -
  # cross-check each turn's counts with SkillLite's own feedback.sqlite
  %[1]s -agent skilllite -in agent-rpc.jsonl -feedback ~/.skilllite/chat/feedback.sqlite -feedback-report check.json -out - | %[2]s -file -
  # live: copy agent-rpc's stdout to the bridge; its stdin stays the client's
  client | skilllite agent-rpc | tee -a agent-rpc.jsonl | %[1]s -agent skilllite -nats nats://127.0.0.1:4222
  # every Codex rollout so far, one session per request
  %[1]s -agent codex -in ~/.codex/sessions -out - | %[2]s -file -
  # and live: every rollout as Codex appends to it, resumed where it stopped
  %[1]s -agent codex -in ~/.codex/sessions -follow -nats nats://127.0.0.1:4222
  # every Claude Code transcript so far (no hook needed), one session per request
  %[1]s -agent claude-code -in ~/.claude/projects -out - | %[2]s -file -
  # and live, as Claude Code writes them
  %[1]s -agent claude-code -in ~/.claude/projects -follow -nats nats://127.0.0.1:4222
  # a SkillLite agent of yours, named coder
  %[1]s -agent skilllite -name coder -in agent-rpc.jsonl -out - | %[2]s -file -

Flags:
`

type options struct {
	in, out, natsURL, prefix string
	agent                    string
	adapter                  adapter.Adapter
	conn                     bus.ConnConfig
	logLevel, logFormat      string
	follow                   bool
	state                    string
	poll                     time.Duration
	maxRecord, maxOpen       int
}

func parse(ctx context.Context, args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	adapters := registry.All()
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage(ctx, adapters))
		fs.PrintDefaults()
	}
	var names []string
	for _, a := range adapters {
		names = append(names, a.Name())
	}
	fs.StringVar(&o.agent, "agent", "", "the agent whose records -in holds (required): "+strings.Join(names, ", "))
	fs.StringVar(&o.in, "in", "-", "read the records from `file` (- for stdin); a directory, for an adapter that reads one (codex: its rollouts, claude-code: its transcripts, recursively)")
	fs.StringVar(&o.out, "out", "", "write the events as JSON lines to `file` (- for stdout); excludes -nats")
	fs.StringVar(&o.natsURL, "nats", "", "publish the events to NATS JetStream at `URL`(s), comma-separated; excludes -out")
	fs.StringVar(&o.prefix, "prefix", "evo", "subject `prefix`: events go to <prefix>.<agent>")
	fs.BoolVar(&o.follow, "follow", false, "keep reading -in (a directory or a file) and publish what is appended, live, to -nats; until interrupted")
	fs.StringVar(&o.state, "state", "", "with -follow: the `file` recording what was published, so that a restart sends nothing twice (default under $XDG_STATE_HOME/evosignal/bridge-follow/, one per -agent, -in and -nats)")
	fs.DurationVar(&o.poll, "poll", 500*time.Millisecond, "with -follow: look for appended lines and new files every `duration`")
	fs.IntVar(&o.maxRecord, "max-record", records.DefaultMax, "skip, as malformed, a record (a line; a JSON value of a hook log) longer than `bytes`; reading goes on after it")
	fs.IntVar(&o.maxOpen, "max-open", adapter.DefaultMaxOpen, "keep at most `n` sessions open at once (claude-code, cursor, codex hook logs); past it the least recently active is dropped as abandoned, without an end, and counted")
	cli.ConnFlags(fs, &o.conn)
	cli.LogFlags(fs, &o.logLevel, &o.logFormat, "info")
	af := declareAdapterFlags(fs, adapters)
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
	o.conn.URL, o.conn.Name = o.natsURL, "evosignal-bridge"
	if err := o.validate(af); err != nil {
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return nil, errUsage
	}
	return o, nil
}

// validate reports every problem of the options at once: the adapter's
// (known, given only its own flags, valid) and the output's.
func (o *options) validate(af *adapterFlags) error {
	var errs []error
	a, err := af.lookup(o.agent)
	if err != nil {
		errs = append(errs, err)
	} else if err := af.apply(a); err != nil {
		errs = append(errs, err)
	} else {
		o.adapter = a
		errs = append(errs, a.Validate())
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
	if o.maxRecord < 1 {
		errs = append(errs, fmt.Errorf("-max-record %d: want a byte count ≥ 1", o.maxRecord))
	}
	if o.maxOpen < 1 {
		errs = append(errs, fmt.Errorf("-max-open %d: want a count ≥ 1", o.maxOpen))
	}
	errs = append(errs, o.validateFollow())
	return errors.Join(errs...)
}

// validateFollow reports the problems of -follow, -state and -poll.
func (o *options) validateFollow() error {
	var errs []error
	if !o.follow {
		if o.state != "" {
			errs = append(errs, errors.New("-state applies to -follow only"))
		}
		return errors.Join(errs...)
	}
	if o.in == "-" {
		errs = append(errs, errors.New("-follow reads -in, a directory or a file, not stdin (pipe stdin without -follow)"))
	}
	if o.natsURL == "" {
		errs = append(errs, errors.New("-follow publishes to NATS: give -nats URL (not -out)"))
	}
	if o.poll <= 0 {
		errs = append(errs, fmt.Errorf("-poll %s must be positive", o.poll))
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
	if o.follow {
		return runFollow(ctx, o, log)
	}
	in, files, err := openInput(o, stdin)
	if err != nil {
		return err
	}
	if f, ok := in.(*os.File); ok && in != stdin {
		defer f.Close()
	}
	var out *output.Output
	env := adapter.Env{Log: log, Now: time.Now, MaxRecord: o.maxRecord, MaxOpen: o.maxOpen, Flush: func() error {
		if out.Buffered() {
			return out.Flush()
		}
		return nil
	}}
	start, err := o.adapter.Open(ctx, env)
	if err != nil {
		return err
	}
	if out, err = openOutput(o, stdout, log); err != nil {
		return err
	}
	tr, err := start(out)
	if err != nil {
		return errors.Join(err, out.Close(ctx))
	}
	head := &headBuffer{}
	readErr := read(ctx, tr, in, files, head, log)
	// Whatever stopped the input, end what it left open and deliver what
	// was translated; after an interrupt too, within a bound.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), output.CloseTimeout)
	defer cancel()
	closeErr := tr.Close(final)
	outErr := tooLarge(out.Close(final))
	reportErr := tr.Report(stderr)
	if readErr == nil {
		readErr = adapter.Unusable(o.agent, tr.Counts())
		if d := registry.Describe(head.b); readErr != nil && d != "" {
			readErr = fmt.Errorf("%w; the input looks like %s", readErr, d)
		}
	}
	return errors.Join(readErr, closeErr, outErr, reportErr)
}

// tooLarge adds, to delivery errors of events larger than the server
// takes, where such events can still go: nothing is lost unsaid.
func tooLarge(err error) error {
	if !errors.Is(err, nats.ErrMaxPayload) {
		return err
	}
	return fmt.Errorf("%w\n(events larger than the NATS server's max_payload were not published; the others were. Bridge to a file instead, -out FILE, and give it to ingest -file FILE, which dead-letters each oversize event with its reason, or raise the server's max_payload)", err)
}

// openInput opens -in: stdin, a file, or, for an adapter.DirAdapter, a
// directory, whose input files it returns instead (in is nil then).
func openInput(o *options, stdin io.Reader) (in io.Reader, files []string, err error) {
	if o.in == "-" {
		return stdin, nil, nil
	}
	if fi, err := os.Stat(o.in); err == nil && fi.IsDir() {
		da, ok := o.adapter.(adapter.DirAdapter)
		if !ok {
			return nil, nil, fmt.Errorf("-in %s is a directory; -agent %s reads one file", o.in, o.agent)
		}
		files, err := da.Files(o.in)
		if err != nil {
			return nil, nil, err
		}
		if len(files) == 0 {
			return nil, nil, fmt.Errorf("-in %s: no -agent %s input files under it", o.in, o.agent)
		}
		return nil, files, nil
	}
	f, err := os.Open(o.in)
	if err != nil {
		return nil, nil, err
	}
	return f, nil, nil
}

// headBuffer keeps the first bytes written to it (64 KiB): what the input
// looks like, for an error that says so.
type headBuffer struct{ b []byte }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// teeFile is a file whose reads are copied to w; Stat stays the file's
// (a hook adapter stamps untimed records with the file's time).
type teeFile struct {
	*os.File
	w io.Writer
}

func (t teeFile) Read(p []byte) (int, error) {
	n, err := t.File.Read(p)
	if n > 0 {
		t.w.Write(p[:n])
	}
	return n, err
}

// tee copies what is read from r to head, keeping an *os.File one.
func tee(r io.Reader, head io.Writer) io.Reader {
	if f, ok := r.(*os.File); ok {
		return teeFile{File: f, w: head}
	}
	return io.TeeReader(r, head)
}

// progressEvery is how often a backfill of many files logs its progress.
const progressEvery = 5 * time.Second

// read hands the translation its input: in, or each of files in turn,
// logging the progress of a long backfill; the first bytes of the first go
// to head.
func read(ctx context.Context, tr adapter.Translation, in io.Reader, files []string, head io.Writer, log *slog.Logger) error {
	if files == nil {
		return tr.Read(ctx, tee(in, head))
	}
	last := time.Now()
	for i, name := range files {
		if time.Since(last) >= progressEvery {
			c := tr.Counts()
			log.Info("progress", "files", fmt.Sprintf("%d/%d", i, len(files)), "records", c.Records, "events", c.Events, "malformed", c.Malformed)
			last = time.Now()
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		var r io.Reader = f
		if i == 0 {
			r = tee(f, head)
		}
		err = tr.Read(ctx, r)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
