// Package events is the evosignal wire contract v1 in Go: the event types
// LLM agents emit about planning and replanning, and the decoder that checks
// a message against the contract.
//
// Every event is a CloudEvents 1.0 event in structured JSON mode. The JSON
// Schema in schema/v1 is the source of truth; Decode accepts exactly what it
// accepts (see Decode for the I-JSON proviso). The package imports neither
// NATS nor DuckDB.
package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// SpecVersion is the CloudEvents version of every event.
const SpecVersion = "1.0"

// ContentType is the datacontenttype of every event.
const ContentType = "application/json"

// Event is one evosignal event: a CloudEvents 1.0 envelope and its data.
type Event struct {
	SpecVersion string `json:"specversion"`
	// ID is unique per Source; New uses a UUIDv7. It is also the
	// Nats-Msg-Id header.
	ID string `json:"id"`
	// Source is the agent instance, e.g. skilllite/host-a/worker-3; its
	// first path segment is the agent name (see AgentOf).
	Source string    `json:"source"`
	Type   Type      `json:"type"`
	Time   time.Time `json:"time"`
	// Subject is the session id.
	Subject         string `json:"subject"`
	DataContentType string `json:"datacontenttype"`
	// Seq is the CloudEvents extension seq: the event's position in its
	// session, from 1.
	Seq        int64  `json:"seq"`
	DataSchema string `json:"dataschema,omitempty"`
	// Extensions holds other CloudEvents extension attributes, encoded at
	// the top level. Decode gives strings, bools and json.Numbers; encoding
	// also takes Go integers and finite floats.
	Extensions map[string]any `json:"-"`
	// Data is the JSON object of the event's data; Payload decodes it.
	Data json.RawMessage `json:"data"`

	// cache is Data read into Go by Decode (see Payload); nil for an
	// Event built otherwise.
	cache *goData
}

// New returns a valid event of type typ from source, in session at position
// seq, happened at at, with data marshalled by encoding/json (typically a
// *XxxData of typ). Its ID is a new UUIDv7. The event is exactly what Decode
// returns for its encoding (Time in UTC, and so on), but for the typed data
// Decode keeps: Payload reads the data when asked. An event that would not
// pass Decode is an error wrapping an *Error.
func New(source, session string, seq int64, typ Type, at time.Time, data any) (*Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("new %s event: generate id: %w", typ, err)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("new %s event: marshal data: %w", typ, err)
	}
	e := Event{
		SpecVersion:     SpecVersion,
		ID:              id.String(),
		Source:          source,
		Type:            typ,
		Time:            at,
		Subject:         session,
		DataContentType: ContentType,
		Seq:             seq,
		Data:            b,
	}
	raw, err := e.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("new %s event: %w", typ, err)
	}
	// Return what a receiver will decode, so that the two never differ
	// (but for the typed data Decode keeps, which a sender does not need:
	// Payload reads the data when asked).
	ev, err := decodeEvent(raw, false)
	if err != nil {
		return nil, fmt.Errorf("new %s event: %w", typ, err)
	}
	return ev, nil
}

// Validate reports whether e would pass Decode once encoded: nil, or an
// error that is or wraps an *Error.
func (e *Event) Validate() error {
	b, err := e.MarshalJSON()
	if err != nil {
		return err
	}
	d := decoders.Get().(*decoder)
	defer d.release()
	if _, err := d.decode(b, false); err != nil {
		return err
	}
	return nil
}

// Agent returns the agent name: the first path segment of e.Source.
func (e *Event) Agent() string { return AgentOf(e.Source) }

// AgentOf returns the first path segment of a source, the agent name:
// "skilllite" for "skilllite/host-a/worker-3".
func AgentOf(source string) string {
	agent, _, _ := strings.Cut(source, "/")
	return agent
}

// UnmarshalJSON decodes b with Decode, so json.Unmarshal into an Event is as
// strict as Decode.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := Decode(b)
	if err != nil {
		return err
	}
	*e = *ev
	return nil
}

// MarshalJSON encodes e as a structured-mode CloudEvent: the attributes in a
// fixed order, then the extensions sorted by name, then data; time in UTC
// with nanoseconds; dataschema omitted when empty. It does not check the
// values (New and Validate do), except that an extension must not reuse an
// attribute name and must have a string, bool, number or json.Number value.
func (e Event) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 320+len(e.Data))
	b = append(b, `{"specversion":`...)
	b = appendString(b, e.SpecVersion)
	b = append(b, `,"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"source":`...)
	b = appendString(b, e.Source)
	b = append(b, `,"type":`...)
	b = appendString(b, string(e.Type))
	if y := e.Time.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("marshal event: time year %d outside [0,9999]", y)
	}
	b = append(b, `,"time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","subject":`...)
	b = appendString(b, e.Subject)
	b = append(b, `,"datacontenttype":`...)
	b = appendString(b, e.DataContentType)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	if e.DataSchema != "" {
		b = append(b, `,"dataschema":`...)
		b = appendString(b, e.DataSchema)
	}
	if len(e.Extensions) > 0 {
		names := make([]string, 0, len(e.Extensions))
		for name := range e.Extensions {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if isAttr([]byte(name)) {
				return nil, fmt.Errorf("marshal event: extension %q is a CloudEvents attribute", name)
			}
			b = append(b, ',')
			b = appendString(b, name)
			b = append(b, ':')
			var err error
			if b, err = appendExtension(b, e.Extensions[name]); err != nil {
				return nil, fmt.Errorf("marshal event: extension %q: %w", name, err)
			}
		}
	}
	b = append(b, `,"data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	return append(b, '}'), nil
}

func appendExtension(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case json.Number:
		if !json.Valid([]byte(v)) || len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return nil, fmt.Errorf("invalid number %q", string(v))
		}
		return append(b, v...), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("not a finite number")
		}
		return strconv.AppendFloat(b, v, 'g', -1, 64), nil
	}
	return nil, fmt.Errorf("value of type %T is not a string, bool or number", v)
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// with encoding/json.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
