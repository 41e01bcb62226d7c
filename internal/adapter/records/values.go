package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Bad is a stretch of input skipped: Line is the line it began on, Err
// what was wrong there.
type Bad struct {
	Line int
	Err  error
}

func (b *Bad) Error() string { return fmt.Sprintf("line %d: %v", b.Line, b.Err) }
func (b *Bad) Unwrap() error { return b.Err }

// ReadValues hands the JSON values of r, one after the other (lines or
// not), to value with the line each begins on, until r ends or ctx is
// done; a JSON array at the top level is its elements one after the other
// (the form hook logs are often committed in). Each value, each element of
// an array, is at most max bytes (DefaultMax when max is not positive).
//
// What does not parse, or is too long, is one bad stretch: bad is called
// once with the line it began on, and reading starts again at the next
// line that parses (the line the error was found on, when the value began
// on an earlier one: a record cut short is followed by a whole one), so
// that one truncated or binary record of a JSON-lines file hides nothing
// after it. The errors that follow one another without a value between are
// the same stretch. An error of value, or of r, ends the reading.
func ReadValues(ctx context.Context, r io.Reader, max int, value func(ctx context.Context, line int, raw []byte) error, bad func(*Bad)) error {
	v := &values{f: feeder{lines: NewLines(r, max)}, value: value, bad: bad}
	return v.read(ctx)
}

type values struct {
	f      feeder
	value  func(context.Context, int, []byte) error
	bad    func(*Bad)
	broken bool // in a bad stretch: no value since the last error
	// inArray: a stretch broke an array; the commas and closing brackets
	// of its rest are skipped at the top level.
	inArray bool
	retried int // the line read again from its start after an error
}

func (v *values) read(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := v.f.peek(v.broken && v.inArray)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, ErrTooLong) {
			return err
		}
		start := v.f.line
		if err != nil { // a line too long where a value should begin
			v.fail(start, err)
			continue
		}
		dec := json.NewDecoder(&v.f)
		if c != '[' {
			var raw json.RawMessage
			v.f.budget = v.f.lines.Max()
			if err := dec.Decode(&raw); err != nil {
				if err := v.decodeErr(start, err); err != nil {
					return err
				}
				continue
			}
			v.f.unread(dec)
			if err := v.good(ctx, raw); err != nil {
				return err
			}
			continue
		}
		if err := v.array(ctx, dec, start); err != nil {
			return err
		}
	}
}

// array reads the elements of the array that begins on line start.
func (v *values) array(ctx context.Context, dec *json.Decoder, start int) error {
	v.f.budget = v.f.lines.Max()
	if _, err := dec.Token(); err != nil { // [
		return v.decodeErr(start, err)
	}
	v.inArray = false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		v.f.budget = v.f.lines.Max()
		if !dec.More() {
			break
		}
		at := v.f.line
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			v.inArray = true
			return v.decodeErr(at, err)
		}
		if err := v.good(ctx, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ]
		v.inArray = true
		return v.decodeErr(start, err)
	}
	v.f.unread(dec)
	return nil
}

// good hands value raw, just decoded: it ended on the line fed last (its
// newlines are all whitespace).
func (v *values) good(ctx context.Context, raw []byte) error {
	v.broken = false
	return v.value(ctx, v.f.line-bytes.Count(raw, []byte("\n")), raw)
}

// decodeErr makes err, from a value that began on line start, a bad
// stretch, and says where to read on; an error of the input is returned.
func (v *values) decodeErr(start int, err error) error {
	if v.f.err != nil {
		return v.f.err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("a value cut short by the end of input: %w", err)
	}
	v.fail(start, err)
	switch {
	case v.f.cur == nil: // a line too long: already skipped
	case start < v.f.line && v.retried != v.f.line:
		// Cut short by a line that may begin a whole record: read that
		// line again from its start.
		v.retried = v.f.line
		v.f.pos = 0
	default:
		v.f.pos = len(v.f.cur)
	}
	return nil
}

func (v *values) fail(line int, err error) {
	if !v.broken {
		v.broken = true
		v.bad(&Bad{Line: line, Err: err})
	}
}

// feeder hands a json.Decoder the input one line at a time (with its
// newline), so that an error is always on the line fed last, and no value
// takes more than budget bytes.
type feeder struct {
	lines  *Lines
	cur    []byte // the line being fed, its newline included; nil after a line too long
	pos    int    // what of cur was fed
	line   int    // cur's number
	budget int    // bytes the value being decoded may still take
	err    error  // the input's error, not EOF
}

func (f *feeder) Read(p []byte) (int, error) {
	for f.pos >= len(f.cur) {
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	if f.budget <= 0 {
		return 0, ErrTooLong
	}
	n := copy(p[:min(len(p), f.budget)], f.cur[f.pos:])
	f.pos += n
	f.budget -= n
	return n, nil
}

func (f *feeder) next() error {
	line, err := f.lines.Next()
	f.line = f.lines.N()
	f.cur, f.pos = f.cur[:0], 0
	if err != nil {
		f.cur = nil
		if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTooLong) {
			f.err = err
		}
		return err
	}
	f.cur = append(append(f.cur, line...), '\n')
	return nil
}

// peek returns the first byte of the next value, fed to no decoder yet;
// seps skips commas and closing brackets before it.
func (f *feeder) peek(seps bool) (byte, error) {
	for {
		for ; f.pos < len(f.cur); f.pos++ {
			switch c := f.cur[f.pos]; c {
			case ' ', '\t', '\r', '\n':
			case ',', ']':
				if !seps {
					return c, nil
				}
			default:
				return c, nil
			}
		}
		if err := f.next(); err != nil {
			return 0, err
		}
	}
}

// unread gives back to the feeder what dec read past its last value: the
// rest of the line fed last (a value's end is found on its last line).
func (f *feeder) unread(dec *json.Decoder) {
	if b, ok := dec.Buffered().(*bytes.Reader); ok {
		f.pos -= b.Len()
	}
}
