package codex

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/adapter/hooks"
	"github.com/evosignal/evosignal/internal/adapter/records"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Name is the adapter's -agent value.
const Name = "codex"

// Adapter is Codex CLI rollouts as an adapter.Adapter: one file, or a
// directory tree of them (~/.codex/sessions). Its flags are -name, -source
// and -model.
type Adapter struct {
	origin adapter.Origin
}

var _ adapter.DirAdapter = (*Adapter)(nil)

// NewAdapter returns the adapter of Codex rollouts, for the bridge.
func NewAdapter() *Adapter { return &Adapter{} }

func (a *Adapter) Name() string         { return Name }
func (a *Adapter) Reads() adapter.Reads { return adapter.JSONLines }

func (a *Adapter) Help() string {
	return `  -agent codex         Codex CLI rollouts ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl):
                       one file, or -in a directory read recursively (rollout-*.jsonl
                       in name order); one session per request (turn), its id
                       <thread>/<turn>; update_plan through the plan-dialect core,
                       commands failed by their exit code (docs/codex.md). Or a log
                       of Codex's hook inputs ($CODEX_HOME/hooks.json, Claude Code's
                       shape), told apart by its first record: the same requests,
                       but hooks carry no exit code, so no call is seen failing
`
}

func (a *Adapter) Flags(fs *flag.FlagSet) {
	a.origin.Flags(fs, Name)
}

func (a *Adapter) Validate() error { return a.origin.Validate() }

// Files lists the rollouts under root, rollout-*.jsonl at any depth, in
// the order of their paths (Codex names them by date and time).
func (a *Adapter) Files(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list rollouts under %s: %w", root, err)
	}
	slices.Sort(out)
	return out, nil
}

func (a *Adapter) Open(_ context.Context, env adapter.Env) (adapter.Start, error) {
	cfg := Config{Agent: a.origin.Agent, Source: a.origin.Source, Model: a.origin.Model, Plan: plandialect.DefaultConfig(), MaxRecord: env.MaxRecord}
	return func(sink agent.Sink) (adapter.Translation, error) {
		tr, err := NewTranslator(cfg, sink)
		if err != nil {
			return nil, err
		}
		hooks, err := claudecode.NewTranslator(claudecode.Config{Agent: cfg.Agent, Source: cfg.Source, Model: cmp.Or(cfg.Model, "unknown"),
			Plan: cfg.Plan, MaxRecord: env.MaxRecord, MaxOpen: env.MaxOpen}, sink, env.Now)
		if err != nil {
			return nil, err
		}
		return &translation{tr: tr, hooks: hooks, env: env}, nil
	}, nil
}

type translation struct {
	tr *Translator
	// hooks reads Codex's hook inputs, which have Claude Code's shape (and
	// a turn_id, so requests are <thread>/<turn> as in the rollouts).
	hooks     *claudecode.Translator
	hookFiles int64
	env       adapter.Env
}

// Read reads one input: a rollout, or a log of hook inputs (its first
// record says which); each call is another file.
func (t *translation) Read(ctx context.Context, in io.Reader) error {
	r, form, err := hooks.Sniff(in)
	if err != nil {
		return err
	}
	if form == hooks.Hooks {
		t.hookFiles++
		return t.hooks.Read(ctx, r, func(e *claudecode.RecordError) {
			t.env.Log.Warn("malformed hook record skipped", "record", e.Record, "err", e.Err)
		})
	}
	return t.tr.Read(ctx, r, func(e *LineError) {
		t.env.Log.Warn("malformed rollout line skipped", "line", e.Line, "err", e.Err)
	})
}

// Read translates the rollout r, a file of its own, until it ends or ctx
// is done. A malformed line, or one longer than Config.MaxRecord, goes to
// onErr and is skipped.
func (t *Translator) Read(ctx context.Context, r io.Reader, onErr func(*LineError)) error {
	t.BeginFile()
	lr := records.NewLines(r, t.cfg.MaxRecord)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, records.ErrTooLong):
			err = t.tooLong(lr.Max())
		case err != nil:
			return fmt.Errorf("read rollout line %d: %w", lr.N()+1, err)
		default:
			if line = bytes.TrimSpace(line); len(line) == 0 {
				t.line++
				continue
			}
			err = t.Line(ctx, line)
		}
		if le := (*LineError)(nil); errors.As(err, &le) {
			onErr(le)
			continue
		}
		if err != nil {
			return err
		}
	}
}

func (t *translation) Close(ctx context.Context) error {
	return errors.Join(t.tr.Close(ctx), t.hooks.Close(ctx))
}

func (t *translation) Counts() adapter.Counts {
	c, h := t.tr.Stats(), t.hooks.Stats()
	return adapter.Counts{Records: c.Records + h.Records, Events: c.Events + h.Events, Malformed: c.Malformed + h.Malformed}
}

func (t *translation) Report(w io.Writer) error {
	c := t.tr.Stats()
	if c.Files > 0 || t.hookFiles == 0 {
		adapter.WriteSummary(w, fmt.Sprintf("%d rollout lines read (%d files, %d threads), %d events emitted, %d requests (%d ended, %d open), %d ignored, %d malformed",
			c.Records, c.Files, c.Threads, c.Events, c.Requests, c.Ended, c.Open, c.Ignored, c.Malformed), c.Notes())
	}
	if t.hookFiles > 0 {
		h := t.hooks.Stats()
		notes := append(h.Notes(), "Codex's hooks carry no exit code and fire no failure event, so every call of a hook log counts as succeeded; bridge the rollouts (-in $CODEX_HOME/sessions) for failures")
		adapter.WriteSummary(w, fmt.Sprintf("%d hook records read (%d files), %d events emitted, %d requests (%d ended, %d open), %d ignored, %d malformed",
			h.Records, t.hookFiles, h.Events, h.Sessions, h.Ended, h.Open, h.Ignored, h.Malformed), notes)
	}
	return nil
}

// Notes returns what the translation could not use, as data-quality
// sentences, and the tokens it saw but cannot emit.
func (c Counts) Notes() []string {
	n := c.Quality.Notes()
	if c.Scripts > 0 {
		n = append(n, fmt.Sprintf("%d code-mode exec scripts: their nested update_plan calls were read from the script's text and their commands from the rollout's CommandExecution items; other nested calls (apply_patch, …) are not in the rollout and were not counted (docs/codex.md, \"Code mode\")", c.Scripts))
	}
	if c.ScriptPlansUnread > 0 {
		n = append(n, fmt.Sprintf("%d nested update_plan calls of code-mode scripts had an argument that is not a JSON literal and were not read; the plan in force was kept", c.ScriptPlansUnread))
	}
	if c.ScriptPlansFailed > 0 {
		n = append(n, fmt.Sprintf("%d nested update_plan calls were in code-mode scripts that did not complete; whether they ran is unknown, so they were not read", c.ScriptPlansFailed))
	}
	if c.NoExitCode > 0 {
		n = append(n, fmt.Sprintf("%d commands had no exit code in the rollout (still running when their output was written) and were taken as succeeded", c.NoExitCode))
	}
	if c.Tokens > 0 {
		n = append(n, fmt.Sprintf("%d tokens used by the threads read (their last token_count); each response's tokens were emitted with its agent.model.called (Codex does not time responses: their duration is 0)", c.Tokens))
	}
	return n
}
