package adaptertest

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
)

// Case is one adapter's input for Conformance.
type Case struct {
	// New returns a fresh value of the adapter (one serves one run).
	New func() adapter.Adapter
	// Args are its flags for every run.
	Args []string
	// Input is a valid input that makes events.
	Input []byte
	// Bad is one record of the input's form that the adapter must skip
	// and count as malformed: a line for adapter.JSONLines, a JSON value
	// for adapter.JSONValues.
	Bad []byte
	// Lines says the input is JSON lines whatever the adapter's Reads
	// says: an adapter that tells its inputs' forms apart (Claude Code's
	// hook logs, JSON values, and transcripts, JSON lines).
	Lines bool
}

// clock stamps the records without a time, so that runs compare byte for
// byte.
var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Conformance is the suite every adapter passes (docs/architecture.md, "An
// agent adapter"):
//   - what it emits passes the contract, and no event id twice;
//   - the same input read again gives the same events, byte for byte (ids
//     derive from the records);
//   - a bad record before the input is skipped and counted as malformed,
//     and the events are the same;
//   - a line that is not JSON, a record cut short, binary bytes and a line
//     longer than the bound (adapter.Env.MaxRecord) are each skipped and
//     counted as one malformed record, and the input after them is read;
//   - an input of bad records only makes no event and is refused
//     (adapter.Unusable).
func Conformance(t *testing.T, c Case) {
	t.Helper()
	first, counts := translate(t, c, c.Input)
	evs := DecodeLines(t, first)
	if len(evs) == 0 {
		t.Fatalf("%s: the input made no events", c.New().Name())
	}
	seen := map[string]bool{}
	for i, e := range evs {
		if seen[e.Source+"\x00"+e.ID] {
			t.Errorf("event %d: id %s emitted twice", i+1, e.ID)
		}
		seen[e.Source+"\x00"+e.ID] = true
	}
	if err := adapter.Unusable(c.New().Name(), counts); err != nil {
		t.Errorf("a valid input is refused: %v", err)
	}

	again, _ := translate(t, c, c.Input)
	if !bytes.Equal(first, again) {
		t.Errorf("the same input read again gives other events:\nfirst:\n%s\nagain:\n%s", first, again)
	}

	bad := append(append(append([]byte(nil), c.Bad...), '\n'), c.Input...)
	withBad, badCounts := translate(t, c, bad)
	if badCounts.Malformed != counts.Malformed+1 {
		t.Errorf("a bad record: %d malformed, want %d", badCounts.Malformed, counts.Malformed+1)
	}
	if !bytes.Equal(first, withBad) {
		t.Errorf("a bad record before the input changed the events:\nwithout:\n%s\nwith:\n%s", first, withBad)
	}

	// Input that is not JSON, a record cut short, a record longer than the
	// bound: each skipped and counted as one malformed record, and what
	// comes after it read, whatever the input's form (JSON lines or
	// values).
	if form := c.New().Reads(); form != adapter.JSONLines && form != adapter.JSONValues {
		t.Errorf("Reads() = %v: the suite knows no such input form", form)
	}
	long := append(bytes.Repeat([]byte("x"), len(c.Input)+1), '\n')
	for _, b := range []struct {
		name   string
		prefix []byte
	}{
		{"a line that is not JSON", []byte("this is not JSON\n")},
		{"a record cut short", []byte(`{"cut": "sh` + "\n")},
		{"binary bytes", []byte("\x00\xff{\"\x01\n")},
		{"a line longer than -max-record", long},
	} {
		got, gc, err := runMax(t, c, append(append([]byte(nil), b.prefix...), c.Input...), len(c.Input))
		if err != nil {
			t.Errorf("%s: read: %v", b.name, err)
			continue
		}
		if gc.Malformed != counts.Malformed+1 || !bytes.Equal(first, got) {
			t.Errorf("%s, then the input: %d malformed (want %d), same events %v", b.name, gc.Malformed, counts.Malformed+1, bytes.Equal(first, got))
		}
	}

	only := append(append(append([]byte(nil), c.Bad...), '\n'), c.Bad...)
	none, noneCounts := translate(t, c, only)
	if len(none) != 0 || noneCounts.Events != 0 {
		t.Errorf("bad records only made events:\n%s", none)
	}
	if adapter.Unusable(c.New().Name(), noneCounts) == nil {
		t.Errorf("an input of bad records only is not refused: %+v", noneCounts)
	}
}

// translate runs a fresh adapter of c over in, as the bridge does, and
// returns the events as JSON lines and the translation's counts.
func translate(tb testing.TB, c Case, in []byte) ([]byte, adapter.Counts) {
	tb.Helper()
	out, counts, err := run(tb, c, in)
	if err != nil {
		tb.Fatalf("%s: read: %v", c.New().Name(), err)
	}
	return out, counts
}

func run(tb testing.TB, c Case, in []byte) ([]byte, adapter.Counts, error) {
	tb.Helper()
	return runMax(tb, c, in, 0)
}

// runMax is run with records of at most max bytes (0: the default).
func runMax(tb testing.TB, c Case, in []byte, max int) ([]byte, adapter.Counts, error) {
	tb.Helper()
	a := c.New()
	fs := flag.NewFlagSet(a.Name(), flag.ContinueOnError)
	a.Flags(fs)
	if err := fs.Parse(c.Args); err != nil {
		tb.Fatalf("%s flags %q: %v", a.Name(), c.Args, err)
	}
	if err := a.Validate(); err != nil {
		tb.Fatalf("%s flags %q: %v", a.Name(), c.Args, err)
	}
	ctx := context.Background()
	start, err := a.Open(ctx, adapter.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock }, MaxRecord: max})
	if err != nil {
		tb.Fatalf("%s: open: %v", a.Name(), err)
	}
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	tr, err := start(w)
	if err != nil {
		tb.Fatalf("%s: start: %v", a.Name(), err)
	}
	readErr := tr.Read(ctx, bytes.NewReader(in))
	if err := tr.Close(ctx); err != nil {
		tb.Fatalf("%s: close: %v", a.Name(), err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := tr.Report(io.Discard); err != nil {
		tb.Fatalf("%s: report: %v", a.Name(), err)
	}
	return buf.Bytes(), tr.Counts(), readErr
}
