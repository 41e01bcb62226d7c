package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/evosignal/evosignal/schema"
)

const testdataDir = "../../testdata/events"

var compiled = sync.OnceValues(schema.CompileEvent)

// eventSchema is the schema of an event of the latest version
// (schema.CompileEvent): what Decode must agree with.
func eventSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	sch, err := compiled()
	if err != nil {
		tb.Fatalf("CompileEvent() error = %v", err)
	}
	return sch
}

// schemaCheck is the reference side of the differential tests: the message
// is JSON (as jsonschema.UnmarshalJSON parses it) in I-JSON form (checked
// here independently of the decoder's parser), and the compiled event schema
// (the latest version, schema.Event) accepts the parsed value.
func schemaCheck(tb testing.TB, raw []byte) error {
	tb.Helper()
	if !utf8.Valid(raw) {
		return errors.New("invalid UTF-8")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	if err := loneSurrogate(raw); err != nil {
		return err
	}
	if err := duplicateNames(raw); err != nil {
		return err
	}
	return eventSchema(tb).Validate(v)
}

// duplicateNames walks the tokens of raw (already known to be one JSON
// value) and reports an object with a repeated member name.
func duplicateNames(raw []byte) error {
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: d == '{', wantKey: true, keys: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.obj {
			if top.wantKey {
				k := tok.(string)
				if top.keys[k] {
					return fmt.Errorf("duplicate member name %q", k)
				}
				top.keys[k] = true
				top.wantKey = false
			} else {
				top.wantKey = true
			}
		}
	}
}

// loneSurrogate scans the strings of raw (known to be valid JSON) for a
// \u escape of a surrogate that is not part of a pair.
func loneSurrogate(raw []byte) error {
	hex := func(b []byte) (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		var n int
		_, err := fmt.Sscanf(string(b[:4]), "%04x", &n)
		return n, err == nil
	}
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && raw[i+1] == 'u':
			r, _ := hex(raw[i+2:])
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					if lo, ok := hex(raw[i+8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
				}
				return fmt.Errorf("lone surrogate at offset %d", i)
			case r >= 0xDC00 && r <= 0xDFFF:
				return fmt.Errorf("lone surrogate at offset %d", i)
			}
			i += 5
		case c == '\\':
			i++
		}
	}
	return nil
}

// line is one message of the test data.
type line struct {
	name string // file:line
	raw  []byte
}

// validLines returns every line of every testdata/events/valid/*.jsonl.
func validLines(tb testing.TB) []line {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(testdataDir, "valid", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no valid test data: %v", err)
	}
	var out []line
	for _, f := range files {
		for i, raw := range readLines(tb, f) {
			out = append(out, line{name: fmt.Sprintf("%s:%d", filepath.Base(f), i+1), raw: raw})
		}
	}
	return out
}

func readLines(tb testing.TB, file string) [][]byte {
	tb.Helper()
	f, err := os.Open(file)
	if err != nil {
		tb.Fatalf("open %s: %v", file, err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read %s: %v", file, err)
	}
	return out
}

// invalidFile is one testdata/events/invalid case.
type invalidFile struct {
	name   string
	reason Reason // from the file name prefix
	raw    []byte
}

func invalidFiles(tb testing.TB) []invalidFile {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(testdataDir, "invalid", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no invalid test data: %v", err)
	}
	var out []invalidFile
	for _, f := range files {
		name := filepath.Base(f)
		prefix, _, ok := strings.Cut(name, "__")
		if !ok {
			tb.Fatalf("%s: name is not <reason>__<what>.json", name)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatalf("read %s: %v", f, err)
		}
		out = append(out, invalidFile{name: name, reason: Reason(prefix), raw: raw})
	}
	return out
}
