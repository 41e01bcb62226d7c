package skilllite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds an input line of ReadLines; a longer one is reported
// malformed and skipped.
const MaxLineBytes = 64 << 20

// ReadLines translates the lines of r until r ends (nil) or ctx is done (an
// error wrapping ctx.Err()); it does not end the open turn: Close does.
// Each malformed line is counted, handed to malformed if that is not nil,
// and skipped. Before reading blocks for more input, flush, if not nil, is
// called, so that a live pipe does not sit on a whole session's events. Any
// other error stops the reading: one of r, flush or the sink.
func (t *Translator) ReadLines(ctx context.Context, r io.Reader, malformed func(*LineError), flush func() error) error {
	lr := newLineReader(r, MaxLineBytes)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before line %d: %w", n, err)
		}
		raw, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", n, err)
		}
		if tooLong {
			err = t.tooLong(n, MaxLineBytes)
		} else {
			err = t.Line(ctx, n, raw)
		}
		if le := (*LineError)(nil); errors.As(err, &le) {
			if malformed != nil {
				malformed(le)
			}
		} else if err != nil {
			return err
		}
		if flush != nil && !lr.buffered() {
			if err := flush(); err != nil {
				return fmt.Errorf("write events: %w", err)
			}
		}
	}
}

// lineReader reads lines of any length up to max bytes; longer lines are
// reported as such, not returned, and reading goes on after them.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<16), max: max}
}

// next returns the next line without its line ending, or io.EOF after the
// last one. tooLong reports a line longer than max (line is then nil).
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	got := false
	for {
		frag, more, err := l.r.ReadLine()
		if err != nil {
			if got && errors.Is(err, io.EOF) {
				break
			}
			return nil, false, err
		}
		got = true
		if len(l.buf)+len(frag) > l.max {
			tooLong = true
			l.buf = l.buf[:0]
		} else if !tooLong {
			l.buf = append(l.buf, frag...)
		}
		if !more {
			break
		}
	}
	if tooLong {
		return nil, true, nil
	}
	return l.buf, false, nil
}

// buffered reports whether input is waiting, so that a caller can flush its
// output before it would block.
func (l *lineReader) buffered() bool { return l.r.Buffered() > 0 }
