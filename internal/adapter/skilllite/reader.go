package skilllite

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/evosignal/evosignal/internal/adapter/records"
)

// ReadLines translates the lines of r until r ends (nil) or ctx is done (an
// error wrapping ctx.Err()); it does not end the open turn: Close does.
// Each malformed line (one longer than Config.MaxRecord too) is counted,
// handed to malformed if that is not nil, and skipped. Before reading
// blocks for more input, flush, if not nil, is called, so that a live pipe
// does not sit on a whole session's events. Any other error stops the
// reading: one of r, flush or the sink.
func (t *Translator) ReadLines(ctx context.Context, r io.Reader, malformed func(*LineError), flush func() error) error {
	lr := records.NewLines(r, t.cfg.MaxRecord)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before line %d: %w", lr.N()+1, err)
		}
		raw, err := lr.Next()
		n := lr.N()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, records.ErrTooLong):
			err = t.tooLong(n, lr.Max())
		case err != nil:
			return fmt.Errorf("read line %d: %w", n+1, err)
		default:
			err = t.Line(ctx, n, raw)
		}
		if le := (*LineError)(nil); errors.As(err, &le) {
			if malformed != nil {
				malformed(le)
			}
		} else if err != nil {
			return err
		}
		if flush != nil && !lr.Buffered() {
			if err := flush(); err != nil {
				return fmt.Errorf("write events: %w", err)
			}
		}
	}
}
