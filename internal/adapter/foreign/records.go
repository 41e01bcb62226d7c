package foreign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// RecordError is a hook record skipped as malformed; Record is its
// 1-based position in the input.
type RecordError struct {
	Record int
	Err    error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record %d: %v", e.Record, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// ReadRecords hands the JSON objects of r, one after the other (lines or
// not), to record until r ends or ctx is done; a JSON array is its elements
// one after the other (the form hook logs are often committed in: one array
// of hook inputs a file). A *RecordError from record goes to onErr,
// numbered, and the reading goes on; a record that is not JSON at all ends
// the input: malformed is called and the error returned. The hook adapters
// (Claude Code, Cursor) read their input with it.
func ReadRecords(ctx context.Context, r io.Reader, record func(context.Context, []byte) error, onErr func(*RecordError), malformed func()) error {
	dec := json.NewDecoder(r)
	n := 0
	one := func(raw []byte) error {
		n++
		err := record(ctx, raw)
		var re *RecordError
		if errors.As(err, &re) {
			re.Record = n
			onErr(re)
			return nil
		}
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			malformed()
			return &RecordError{Record: n + 1, Err: err}
		}
		if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '[' {
			if err := one(raw); err != nil {
				return err
			}
			continue
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			malformed()
			return &RecordError{Record: n + 1, Err: err}
		}
		for _, e := range elems {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := one(e); err != nil {
				return err
			}
		}
	}
}

// CountingSink counts the events that reach Next in *N.
type CountingSink struct {
	Next agent.Sink
	N    *int64
}

var _ agent.Sink = CountingSink{}

func (c CountingSink) Send(ctx context.Context, e *events.Event) error {
	*c.N++
	return c.Next.Send(ctx, e)
}
