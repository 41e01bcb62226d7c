package hooks

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// Translator is what a hook adapter's translator does.
type Translator interface {
	Read(ctx context.Context, r io.Reader, onErr func(*RecordError)) error
	Close(ctx context.Context) error
	Stats() Counts
}

// Adapter is a hook adapter as an adapter.Adapter: its flags are -name,
// -source and -model; the built-in plan tools and the default plan files
// are plans.
type Adapter struct {
	name, help string
	sessions   string // what its summary calls a session
	translator func(Config, agent.Sink, adapter.Env) (Translator, error)
	origin     adapter.Origin
}

var _ adapter.Adapter = (*Adapter)(nil)

// NewAdapter returns the adapter name, with its bridge -h entry help, its
// sessions called sessions in the summary, and its translator.
func NewAdapter(name, help, sessions string, translator func(Config, agent.Sink, adapter.Env) (Translator, error)) *Adapter {
	return &Adapter{name: name, help: help, sessions: sessions, translator: translator}
}

func (a *Adapter) Name() string         { return a.name }
func (a *Adapter) Reads() adapter.Reads { return adapter.JSONValues }
func (a *Adapter) Help() string         { return a.help }

func (a *Adapter) Flags(fs *flag.FlagSet) {
	a.origin.Flags(fs, a.name)
}

func (a *Adapter) Validate() error { return a.origin.Validate() }

func (a *Adapter) Open(_ context.Context, env adapter.Env) (adapter.Start, error) {
	cfg := Config{Agent: a.origin.Agent, Source: a.origin.Source, Model: a.origin.Model, Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig(),
		MaxRecord: env.MaxRecord, MaxOpen: env.MaxOpen}
	return func(sink agent.Sink) (adapter.Translation, error) {
		tr, err := a.translator(cfg, sink, env)
		if err != nil {
			return nil, err
		}
		return NewTranslation(tr, env, a.sessions), nil
	}, nil
}

// NewTranslation returns tr as an adapter.Translation: malformed records
// logged to env.Log, its summary calling its sessions sessions. An adapter
// that reads hook inputs among other forms (Claude Code's, with its
// transcripts) uses it for the hook inputs.
func NewTranslation(tr Translator, env adapter.Env, sessions string) adapter.Translation {
	return &translation{tr: tr, env: env, sessions: sessions}
}

type translation struct {
	tr       Translator
	env      adapter.Env
	sessions string
}

func (t *translation) Read(ctx context.Context, in io.Reader) error {
	return t.tr.Read(ctx, in, func(e *RecordError) {
		t.env.Log.Warn("malformed hook record skipped", "record", e.Record, "err", e.Err)
	})
}

func (t *translation) Close(ctx context.Context) error { return t.tr.Close(ctx) }

func (t *translation) Counts() adapter.Counts {
	c := t.tr.Stats()
	return adapter.Counts{Records: c.Records, Events: c.Events, Malformed: c.Malformed}
}

func (t *translation) Report(w io.Writer) error {
	c := t.tr.Stats()
	adapter.WriteSummary(w, fmt.Sprintf("%d hook records read, %d events emitted, %d %s (%d ended, %d open), %d ignored, %d malformed",
		c.Records, c.Events, c.Sessions, t.sessions, c.Ended, c.Open, c.Ignored, c.Malformed), c.Notes())
	return nil
}
