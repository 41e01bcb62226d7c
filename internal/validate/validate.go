// Package validate checks events against the contract the ingester accepts
// (its latest version, schema.Latest: v1 and what v1.1 adds) without a
// database and lists every violation, not only the first: the JSON Schema
// (schema.CompileEvent) finds every way an event breaks it, the decoder
// (events.Decode) what JSON parsing hides from a schema (duplicate member
// names, invalid UTF-8, lone surrogate escapes) and decides what is valid.
package validate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/schema"
)

// Violation is one way an event breaks the contract.
type Violation struct {
	Code string // the dead-letter code the ingester would give: malformed_json, unknown_type, schema_violation
	Path string // JSON pointer of the offending value; empty for the event as a whole
	Msg  string
}

func (v Violation) String() string {
	if v.Path == "" {
		return v.Code + ": " + v.Msg
	}
	return v.Path + ": " + v.Msg
}

// Validator checks events. Safe for concurrent use.
type Validator struct {
	schema  *jsonschema.Schema
	printer *message.Printer
}

// New compiles the contract's latest version.
func New() (*Validator, error) {
	sch, err := schema.CompileEvent()
	if err != nil {
		return nil, fmt.Errorf("compile the event schema: %w", err)
	}
	return &Validator{schema: sch, printer: message.NewPrinter(language.English)}, nil
}

// Event returns every violation of one event (a JSON document), none when
// the ingester would accept it.
func (v *Validator) Event(raw []byte) []Violation {
	_, err := events.Decode(raw)
	if err == nil {
		return nil
	}
	first := Violation{Code: string(events.ReasonSchema), Msg: err.Error()}
	var de *events.Error
	if errors.As(err, &de) {
		first = Violation{Code: string(de.Reason), Path: de.Path, Msg: de.Msg}
	}
	doc, perr := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if perr != nil {
		return []Violation{first} // not JSON: nothing more can be read
	}
	var out []Violation
	if first.Code == string(events.ReasonMalformed) {
		out = append(out, first) // what the schema cannot see
	}
	var ve *jsonschema.ValidationError
	if err := v.schema.Validate(doc); errors.As(err, &ve) {
		code := first.Code
		if code == string(events.ReasonMalformed) {
			code = string(events.ReasonSchema)
		}
		out = append(out, v.leaves(ve, code)...)
	}
	if len(out) == 0 {
		out = append(out, first) // a rule only the decoder holds
	}
	return out
}

// leaves flattens a schema error into its most specific causes, ordered by
// path.
func (v *Validator) leaves(ve *jsonschema.ValidationError, code string) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{Code: code, Path: pointer(e.InstanceLocation), Msg: e.ErrorKind.LocalizedString(v.printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pointer is the JSON pointer (RFC 6901) of a location.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// Summary counts what File checked.
type Summary struct {
	Events  int // non-blank lines
	Invalid int // lines with at least one violation
}

// maxLine bounds one line, as the ingester's file loader does.
const maxLine = 64 << 20

// File checks the JSON lines of r, calling each with every violation of
// every line (1-based line numbers). Blank lines are skipped. An event
// larger than maxEventBytes (if positive) is reported as oversize, as the
// ingester dead-letters it, besides its other violations.
func (v *Validator) File(ctx context.Context, r io.Reader, maxEventBytes int, each func(line int64, viol Violation)) (Summary, error) {
	var sum Summary
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var line int64
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		sum.Events++
		viols := v.Event(raw)
		if maxEventBytes > 0 && len(raw) > maxEventBytes {
			viols = append([]Violation{{Code: "oversize", Msg: fmt.Sprintf("event of %d bytes is over the limit of %d bytes", len(raw), maxEventBytes)}}, viols...)
		}
		if len(viols) > 0 {
			sum.Invalid++
		}
		for _, viol := range viols {
			each(line, viol)
		}
	}
	if err := sc.Err(); err != nil {
		return sum, fmt.Errorf("read line %d: %w", line+1, err)
	}
	return sum, nil
}
