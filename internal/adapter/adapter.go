// Package adapter is the contract every foreign agent format implements to
// come into evosignal through `evosignal bridge`: what it reads, the flags
// it takes, and a Translation that sends the events of one input to a sink
// and reports what it could not use. The plan-tool calls of every adapter go
// through the one plan-dialect core (internal/plandialect); an adapter
// translates and never counts or judges.
//
// The adapters are listed, in one plain list, in internal/adapter/registry;
// the conformance suite every adapter passes is
// internal/workshop/adaptertest.Conformance.
package adapter

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/evosignal/evosignal/agent"
)

// An Adapter is one foreign agent's format. One Adapter value serves one
// run: Flags binds its settings to a flag set, Validate checks what the
// flags set, Open starts the translation of one input.
type Adapter interface {
	// Name is the -agent value that selects it, and the default agent
	// name of its events.
	Name() string
	// Reads is the form of input it reads.
	Reads() Reads
	// Help is its entry in `bridge -h`: lines indented by two spaces,
	// naming what it reads and the events it makes of it.
	Help() string
	// Flags declares the settings it takes on fs. The bridge refuses any
	// flag given with an adapter that did not declare it.
	Flags(fs *flag.FlagSet)
	// Validate reports every problem of the settings at once (a usage
	// error); it may fill in defaults that depend on other settings.
	Validate() error
	// Open reads what the translation needs beside the input (a side file
	// that cannot be read is an error before the output is opened) and
	// returns how to start the translation of one input once it is.
	Open(ctx context.Context, env Env) (Start, error)
}

// A DirAdapter is an Adapter whose input may also be a directory tree
// (`bridge -in DIR`; an agent that keeps one file per session, as Codex
// does). Files lists the files under root that are its input, in the order
// to read them; the bridge then calls the Translation's Read once per file,
// in that order, and Close once after the last. The bridge refuses a
// directory for an adapter that is not a DirAdapter.
type DirAdapter interface {
	Adapter
	Files(root string) ([]string, error)
}

// Start starts a translation sending to sink.
type Start func(sink agent.Sink) (Translation, error)

// Reads is the form of an adapter's input.
type Reads int

const (
	// JSONLines: one JSON value per line; a malformed line, or one longer
	// than Env.MaxRecord, is skipped and counted, and reading goes on with
	// the next line.
	JSONLines Reads = iota
	// JSONValues: JSON values one after the other, lines or not; a value
	// that is not a record of the format is skipped and counted; a stretch
	// of input that is not JSON, or too long, is one malformed record, and
	// reading goes on at the next line that parses.
	JSONValues
)

func (r Reads) String() string {
	switch r {
	case JSONLines:
		return "JSON lines"
	case JSONValues:
		return "JSON values"
	}
	return "unknown input form"
}

// Env is what the bridge gives a translation.
type Env struct {
	// Log gets the warnings (a malformed record skipped, a side file read).
	Log *slog.Logger
	// Now stamps records that carry no time.
	Now func() time.Time
	// Flush, when not nil, delivers the events in hand (if the output holds
	// any back): a translation of a live stream calls it before reading
	// blocks for more input.
	Flush func() error
	// MaxRecord bounds a record's bytes (bridge -max-record; 0:
	// records.DefaultMax): a longer record is skipped as malformed.
	MaxRecord int
	// MaxOpen bounds the sessions a translation keeps open at once
	// (bridge -max-open; 0: the adapter's default, DefaultMaxOpen): past
	// it, the least recently active one is dropped as abandoned.
	MaxOpen int
}

// DefaultMaxOpen is the sessions a translation keeps open at once unless
// the bridge's -max-open says otherwise: far more than one agent runs at
// once, few enough that their memory stays small (docs/operations.md,
// "Limits").
const DefaultMaxOpen = 10000

// A Translation is one adapter's run over one input.
type Translation interface {
	// Read translates in until it ends or ctx is done. A malformed record
	// is logged, counted and skipped; any other error stops the reading.
	Read(ctx context.Context, in io.Reader) error
	// Close ends what the input left open and sends its events, within ctx
	// (which the bridge bounds, after an interrupt too).
	Close(ctx context.Context) error
	// Counts are the totals so far, for the bridge's checks.
	Counts() Counts
	// Report writes the run's summary, after its events were delivered: a
	// line of totals, the data-quality notes, anything else the adapter
	// cross-checked.
	Report(w io.Writer) error
}

// Counts are what the bridge checks of every translation.
type Counts struct {
	Records   int64 // records (lines, values) read
	Events    int64 // events sent
	Malformed int64 // records skipped as malformed
}

// ReportPrefix begins every line a Report writes.
const ReportPrefix = "bridge: "

// WriteSummary writes a Report's usual lines: the totals, then each
// data-quality note.
func WriteSummary(w io.Writer, totals string, notes []string) {
	fmt.Fprintf(w, "%s%s\n", ReportPrefix, totals)
	for _, n := range notes {
		fmt.Fprintf(w, "%sdata quality: %s\n", ReportPrefix, n)
	}
}

// Unusable is the error of an input read to its end that made no event and
// holds no record, of which most records were malformed (more than half:
// another agent's records, mostly), or of which no record could be used:
// some were malformed and none made an event. An input whose records were
// all valid and made no event (SkillLite's plain answers) is not.
func Unusable(agent string, c Counts) error {
	switch {
	case c.Records == 0 && c.Events == 0:
		return fmt.Errorf("no events: the input holds no -agent %s record", agent)
	case c.Malformed*2 > c.Records && c.Events > 0:
		return fmt.Errorf("%d of the %d records read were malformed (%d events made of the rest); is this -agent %s input?", c.Malformed, c.Records, c.Events, agent)
	case c.Events > 0, c.Malformed == 0:
		return nil
	}
	return fmt.Errorf("no events: %d of the %d records read were malformed and none could be used; is this -agent %s input?", c.Malformed, c.Records, agent)
}
