// Package records is the one reader of every adapter's input: lines
// (Lines) or JSON values one after the other (ReadValues), each record at
// most a bounded number of bytes. A record that is too long or does not
// parse is reported with its line number and skipped; reading goes on with
// the next line, so one bad record never hides the ones after it, and
// memory stays bounded whatever the input holds (docs/operations.md,
// "Limits").
package records

import (
	"bufio"
	"errors"
	"io"
)

// DefaultMax is the longest record read unless the bridge's -max-record
// says otherwise: 64 MiB, room for the largest records the agents write (a
// Codex session_meta with the whole base instructions, a Claude Code
// api-request line, one OTLP export request).
const DefaultMax = 64 << 20

// ErrTooLong is the error of a record longer than its reader's bound;
// Lines.Next returns it for a line it skipped.
var ErrTooLong = errors.New("record longer than the bound (bridge -max-record)")

// Lines reads the lines of an input, each at most max bytes: a longer line
// is read to its end without being kept, and Next returns ErrTooLong for it.
// Memory is the longest line kept, at most max, and a 64 KiB buffer.
type Lines struct {
	r   *bufio.Reader
	max int
	buf []byte
	n   int
}

// NewLines returns the lines of r, each at most max bytes (DefaultMax when
// max is not positive).
func NewLines(r io.Reader, max int) *Lines {
	if max <= 0 {
		max = DefaultMax
	}
	return &Lines{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Max is the longest line Next returns.
func (l *Lines) Max() int { return l.max }

// N is the 1-based number of the line Next returned last.
func (l *Lines) N() int { return l.n }

// Next returns the next line without its line ending (\n or \r\n), valid
// until the next call, or io.EOF after the last line (a last line without
// a newline is a line). A line longer than Max is skipped: Next returns
// ErrTooLong for it, and the next call returns the line after it. Any
// other error is the input's.
func (l *Lines) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	got, tooLong := false, false
	for {
		frag, more, err := l.r.ReadLine()
		if err != nil {
			if got && errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if !got {
			got = true
			l.n++
		}
		switch {
		case tooLong:
		case len(l.buf)+len(frag) > l.max:
			tooLong = true
			l.buf = l.buf[:0]
		case !more && len(l.buf) == 0:
			// The whole line in one fragment: no copy. (bufio's buffer is
			// valid until the next read, as the result is.)
			return frag, nil
		default:
			l.grow(len(frag))
			l.buf = append(l.buf, frag...)
		}
		if !more {
			break
		}
	}
	if tooLong {
		return nil, ErrTooLong
	}
	return l.buf, nil
}

// grow makes room for n more bytes, doubling (up to max), so that the
// buffers a long line grows through add up to no more than twice the line.
func (l *Lines) grow(n int) {
	need := len(l.buf) + n
	if need <= cap(l.buf) {
		return
	}
	c := min(max(2*cap(l.buf), need, 4096), l.max)
	b := make([]byte, len(l.buf), c)
	copy(b, l.buf)
	l.buf = b
}

// Buffered reports whether input is waiting, so that a caller can flush
// its output before a read would block.
func (l *Lines) Buffered() bool { return l.r.Buffered() > 0 }
