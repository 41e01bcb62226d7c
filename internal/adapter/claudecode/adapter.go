package claudecode

import (
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
	"github.com/evosignal/evosignal/internal/adapter/hooks"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Name is the adapter's -agent value.
const Name = "claude-code"

// Adapter is Claude Code as an adapter.Adapter: each input is a hook log
// (the hook inputs docs/claude-code.md's hook appends) or a transcript,
// told apart by its first records; -in may be a directory tree of
// transcripts (~/.claude/projects). Its flags are -name, -source and
// -model.
type Adapter struct {
	origin adapter.Origin
}

var _ adapter.DirAdapter = (*Adapter)(nil)

// NewAdapter returns the adapter of Claude Code's hooks and transcripts,
// for the bridge.
func NewAdapter() *Adapter { return &Adapter{} }

func (a *Adapter) Name() string { return Name }

// Reads is the hook inputs' form, JSON values; a transcript is JSON lines
// (a line that is not JSON is skipped there).
func (a *Adapter) Reads() adapter.Reads { return adapter.JSONValues }
func (a *Adapter) Help() string         { return help }

func (a *Adapter) Flags(fs *flag.FlagSet) { a.origin.Flags(fs, Name) }
func (a *Adapter) Validate() error        { return a.origin.Validate() }

// Files lists the *.jsonl files under root, at any depth, in the order of
// their paths: ~/.claude/projects/<project>/<session>.jsonl and the
// sub-agents' <session>/subagents/*.jsonl.
func (a *Adapter) Files(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list transcripts under %s: %w", root, err)
	}
	slices.Sort(out)
	return out, nil
}

func (a *Adapter) Open(_ context.Context, env adapter.Env) (adapter.Start, error) {
	cfg := Config{Agent: a.origin.Agent, Source: a.origin.Source, Model: a.origin.Model, Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig(),
		MaxRecord: env.MaxRecord, MaxOpen: env.MaxOpen}
	return func(sink agent.Sink) (adapter.Translation, error) {
		// Both built now, so that a configuration error shows before any input.
		h, err := NewTranslator(cfg, sink, env.Now)
		if err != nil {
			return nil, err
		}
		tx, err := NewTranscript(cfg, sink)
		if err != nil {
			return nil, err
		}
		tx.OnEnd(func(key string, u Usage) {
			env.Log.Debug("request ended", "request", key, "input_tokens", u.Input, "output_tokens", u.Output,
				"cache_read_tokens", u.CacheRead, "cache_creation_tokens", u.CacheCreation)
		})
		return &translation{hooks: hooks.NewTranslation(h, env, "sessions"), tx: tx, env: env}, nil
	}, nil
}

// translation reads each input as what its first records say it is.
type translation struct {
	hooks         adapter.Translation
	tx            *Transcript
	env           adapter.Env
	hookInputs    int // inputs read as hook logs
	transcriptsIn int // inputs read as transcripts
}

func (t *translation) Read(ctx context.Context, in io.Reader) error {
	name := "-"
	if f, ok := in.(interface{ Name() string }); ok {
		name = f.Name()
	}
	r, form, err := hooks.Sniff(in)
	if err != nil {
		return err
	}
	if form != hooks.Typed { // hook inputs, or nothing that says otherwise
		t.hookInputs++
		return t.hooks.Read(ctx, r)
	}
	t.transcriptsIn++
	before := t.tx.Stats()
	err = t.tx.Read(ctx, r, func(e *LineError) {
		t.env.Log.Warn("malformed transcript line skipped", "file", name, "line", e.Line, "err", e.Err)
	})
	after := t.tx.Stats()
	t.env.Log.Info("transcript read", "file", name, "lines", after.Records-before.Records,
		"events", after.Events-before.Events, "requests", after.Requests-before.Requests,
		"sidechain_lines", after.Sidechain.Lines-before.Sidechain.Lines, "malformed", after.Malformed-before.Malformed)
	return err
}

func (t *translation) Close(ctx context.Context) error {
	return errors.Join(t.hooks.Close(ctx), t.tx.Close(ctx))
}

func (t *translation) Counts() adapter.Counts {
	h, x := t.hooks.Counts(), t.tx.Stats()
	return adapter.Counts{Records: h.Records + x.Records, Events: h.Events + x.Events, Malformed: h.Malformed + x.Malformed}
}

// Report writes the hook inputs' summary when any were read (or nothing
// was), the transcripts' when any were.
func (t *translation) Report(w io.Writer) error {
	if t.hookInputs > 0 || t.transcriptsIn == 0 {
		if err := t.hooks.Report(w); err != nil {
			return err
		}
	}
	if t.transcriptsIn > 0 {
		c := t.tx.Stats()
		adapter.WriteSummary(w, c.summary(), c.notes())
	}
	return nil
}

func (c TranscriptCounts) summary() string {
	var skipped int64
	types := slices.Collect(func(yield func(string) bool) {
		for typ, n := range c.Skipped {
			skipped += n
			if !yield(typ) {
				return
			}
		}
	})
	slices.SortFunc(types, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.Skipped[b], c.Skipped[a]), cmp.Compare(a, b))
	})
	var by []string
	for _, typ := range types {
		by = append(by, fmt.Sprintf("%s %d", typ, c.Skipped[typ]))
	}
	return fmt.Sprintf("%d transcript lines read (%d files), %d events emitted, %d requests (%d ended, %d open), %d lines skipped by type (%s), %d ignored, %d malformed; sidechains: %d lines, %d calls (%d failed); tokens: %s; sidechains' tokens: %s",
		c.Records, c.Files, c.Events, c.Requests, c.Ended, c.Open, skipped, strings.Join(by, ", "), c.Ignored, c.Malformed,
		c.Sidechain.Lines, c.Sidechain.Calls, c.Sidechain.Failed, c.Usage, c.Sidechain.Usage)
}

func (c TranscriptCounts) notes() []string {
	n := c.Quality.Notes()
	if c.Open > 0 {
		n = append(n, fmt.Sprintf("%d requests had no final answer in the transcript (still being written, or Claude Code stopped mid-turn) and were left open: not ended, their calls emitted", c.Open))
	}
	if c.Evicted > 0 {
		n = append(n, fmt.Sprintf("%d requests were still open when -max-open newer ones had begun and were dropped as abandoned: their events so far were sent, but no agent.session.ended was made up for them (their outcome is unknown, as for a request left open), and later lines of them were ignored", c.Evicted))
	}
	if c.Unanswered > 0 {
		n = append(n, fmt.Sprintf("%d tool calls had no result in the transcript when their request ended and were not emitted", c.Unanswered))
	}
	if c.Sidechain.Calls > 0 {
		n = append(n, fmt.Sprintf("%d sub-agent calls (sidechains) are not counted as calls of the requests that started them: each sub-agent is its parent's one Task/Agent call", c.Sidechain.Calls))
	}
	if c.Sidechain.Usage != (Usage{}) {
		n = append(n, "sub-agents' (sidechains') tokens are not part of the requests that started them: their model calls are not emitted")
	}
	return n
}
