package otel

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
)

// Name is the adapter's -agent value.
const Name = "otel"

// Adapter is OTLP JSON files (traces and logs) as an adapter.Adapter. It
// takes no flags: each session's source is <agent>/otel, the agent its spans
// name.
type Adapter struct{}

var _ adapter.Adapter = Adapter{}

func (Adapter) Name() string           { return Name }
func (Adapter) Reads() adapter.Reads   { return adapter.JSONValues }
func (Adapter) Flags(fs *flag.FlagSet) {}
func (Adapter) Validate() error        { return nil }

func (Adapter) Help() string {
	return `  -agent otel          OpenTelemetry traces and logs as OTLP JSON (the collector's
                       file exporter: one export request a line; or one document,
                       pretty-printed or not), in the conventions the frameworks and
                       CLIs emit: GenAI (current and older names), OpenInference,
                       OpenLLMetry, the Vercel AI SDK, Claude Code's and Codex's own.
                       One session per trace (<conversation>/<prompt|turn> where the
                       spans or logs name them), its source <agent>/otel; log records
                       join their trace's spans, so give a run's traces and logs in
                       one input (cat traces.jsonl logs.jsonl). A first record that
                       is not OTLP refuses the input (docs/otel.md)
`
}

func (Adapter) Open(_ context.Context, env adapter.Env) (adapter.Start, error) {
	return func(sink agent.Sink) (adapter.Translation, error) {
		m, err := New(DefaultConfig(), sink)
		if err != nil {
			return nil, err
		}
		return &translation{m: m, env: env}, nil
	}, nil
}

type translation struct {
	m         *Mapper
	env       adapter.Env
	malformed int64 // lines that did not decode
}

// Read maps the whole input: at its end every trace with a GenAI span is
// mapped, so Close has nothing left to do. OTLP that made no event is an
// error that says why: spans of no GenAI convention (an HTTP server's
// traces), or log records without the spans they belong to.
func (t *translation) Read(ctx context.Context, in io.Reader) error {
	err := ReadJSON(ctx, in, t.env.MaxRecord, t.m, func(e *LineError) {
		t.malformed++
		t.env.Log.Warn("malformed line skipped", "line", e.Line, "err", e.Err)
	})
	if err != nil {
		return err
	}
	return noEvents(t.m.Stats())
}

// noEvents is the error of an OTLP input of valid records that made no
// event, nil when it made some or held no record.
func noEvents(s Stats) error {
	switch {
	case s.Events > 0:
		return nil
	case s.Spans > s.Rejected:
		return fmt.Errorf("no events: %d spans in %d traces, none of them an agent, workflow, model, tool or plan span of a convention evosignal reads (docs/otel.md, \"The mapping\"); are these an agent's traces?", s.Spans, s.Unmapped)
	case s.LogRecords > 0:
		return fmt.Errorf("no events: %d log records and no spans; log records only join their run's spans: give its traces too (cat traces.jsonl logs.jsonl)", s.LogRecords)
	}
	return nil
}

func (t *translation) Close(context.Context) error { return nil }

func (t *translation) Counts() adapter.Counts {
	s := t.m.Stats()
	return adapter.Counts{Records: s.Spans + t.malformed, Events: s.Events, Malformed: s.Rejected + t.malformed}
}

func (t *translation) Report(w io.Writer) error {
	s := t.m.Stats()
	adapter.WriteSummary(w, fmt.Sprintf("%d spans and %d log records read, %d events emitted, %d sessions, %d spans rejected, %d traces without a GenAI span ignored%s",
		s.Spans, s.LogRecords, s.Events, s.Sessions, s.Rejected, s.Unmapped, conventions(s.Conventions)), s.Notes())
	return nil
}

// conventions says how many spans each convention read, "" for none.
func conventions(c map[string]int64) string {
	if len(c) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(c))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, c[n])
	}
	return " (spans read by convention: " + strings.Join(parts, ", ") + ")"
}
