package foreign

import (
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
// not), to record until r ends or ctx is done. A *RecordError from record
// goes to onErr, numbered, and the reading goes on; a record that is not
// JSON at all ends the input: malformed is called and the error returned.
// The hook adapters (Claude Code, Cursor) read their input with it.
func ReadRecords(ctx context.Context, r io.Reader, record func(context.Context, []byte) error, onErr func(*RecordError), malformed func()) error {
	dec := json.NewDecoder(r)
	for n := 1; ; n++ {
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
			return &RecordError{Record: n, Err: err}
		}
		err = record(ctx, raw)
		var re *RecordError
		if errors.As(err, &re) {
			re.Record = n
			onErr(re)
			continue
		}
		if err != nil {
			return err
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
