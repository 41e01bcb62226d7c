// Package anyagent converts the agent traces that mozilla-ai/any-agent
// publishes (its AgentTrace model dumped as JSON: tests/assets/*_trace.json)
// to OTLP JSON, the collector file exporter's format, so that the OTel
// adapter reads them as it reads any exported file
// (testdata/public/otel/any-agent/README.md says what is kept and how).
package anyagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// OTLP span flags (trace.proto, SpanFlags): bits 0-7 are the W3C trace
// flags, bit 8 says whether the parent is remote is known, bit 9 that it is.
const (
	flagsTraceMask   = 0xff
	flagHasIsRemote  = 0x100
	flagParentRemote = 0x200
)

type agentTrace struct {
	Spans []agentSpan `json:"spans"`
	// final_output and the rest are not spans: not converted.
}

type agentSpan struct {
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Parent     *spanContext    `json:"parent"`
	StartTime  json.Number     `json:"start_time"`
	EndTime    json.Number     `json:"end_time"`
	Status     status          `json:"status"`
	Context    spanContext     `json:"context"`
	Attributes json.RawMessage `json:"attributes"`
	Links      []link          `json:"links"`
	Events     []event         `json:"events"`
	Resource   json.RawMessage `json:"resource"`
}

type spanContext struct {
	TraceID    *json.Number `json:"trace_id"`
	SpanID     *json.Number `json:"span_id"`
	IsRemote   bool         `json:"is_remote"`
	TraceFlags struct {
		Value uint32 `json:"value"`
	} `json:"trace_flags"`
	TraceState struct {
		Entries json.RawMessage `json:"entries"`
	} `json:"trace_state"`
}

type status struct {
	StatusCode  string  `json:"status_code"`
	Description *string `json:"description"`
}

type link struct {
	Context    spanContext     `json:"context"`
	Attributes json.RawMessage `json:"attributes"`
}

type event struct {
	Name       string          `json:"name"`
	Timestamp  json.Number     `json:"timestamp"`
	Attributes json.RawMessage `json:"attributes"`
}

type resource struct {
	Attributes json.RawMessage `json:"attributes"`
	SchemaURL  string          `json:"schema_url"`
}

// Convert turns one any-agent trace file into OTLP JSON: one
// ExportTraceServiceRequest ({"resourceSpans": [...]}) on one line, ended by
// a newline. Every span is kept in the file's order with its name, kind,
// times, status, events, links and attributes as recorded (in their order;
// integers as intValue, numbers with a fraction or exponent as doubleValue);
// spans in a row with the same resource share one resourceSpans. The
// decimal trace and span ids become hex; the span flags carry the recorded
// trace flags and the parent's is_remote. any-agent records no
// instrumentation scope: the scope is left empty.
func Convert(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var t agentTrace
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("decode any-agent trace: %w", err)
	}
	if len(t.Spans) == 0 {
		return nil, errors.New("any-agent trace: no spans")
	}
	td := ptrace.NewTraces()
	var spans ptrace.SpanSlice
	var lastRes []byte
	for i, s := range t.Spans {
		if i == 0 || !bytes.Equal(lastRes, s.Resource) {
			rs := td.ResourceSpans().AppendEmpty()
			var r resource
			if err := decode(s.Resource, &r); err != nil {
				return nil, fmt.Errorf("span %d (%s): resource: %w", i, s.Name, err)
			}
			if err := putAttributes(rs.Resource().Attributes(), r.Attributes); err != nil {
				return nil, fmt.Errorf("span %d (%s): resource: %w", i, s.Name, err)
			}
			rs.SetSchemaUrl(r.SchemaURL)
			spans = rs.ScopeSpans().AppendEmpty().Spans()
			lastRes = s.Resource
		}
		if err := putSpan(spans.AppendEmpty(), s); err != nil {
			return nil, fmt.Errorf("span %d (%s): %w", i, s.Name, err)
		}
	}
	out, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func putSpan(sp ptrace.Span, s agentSpan) error {
	tid, sid, err := ids(s.Context)
	if err != nil {
		return fmt.Errorf("context: %w", err)
	}
	if tid.IsEmpty() || sid.IsEmpty() {
		return errors.New("context has no trace or span id")
	}
	sp.SetTraceID(tid)
	sp.SetSpanID(sid)
	if err := putTraceState(sp.TraceState(), s.Context); err != nil {
		return err
	}
	flags := s.Context.TraceFlags.Value&flagsTraceMask | flagHasIsRemote
	if p := s.Parent; p != nil {
		ptid, psid, err := ids(*p)
		if err != nil {
			return fmt.Errorf("parent: %w", err)
		}
		if !psid.IsEmpty() {
			if ptid != tid {
				return fmt.Errorf("parent of another trace (%s): OTLP cannot say so", ptid)
			}
			sp.SetParentSpanID(psid)
		}
		if p.IsRemote {
			flags |= flagParentRemote
		}
	}
	sp.SetFlags(flags)
	sp.SetName(s.Name)
	kind, ok := kinds[s.Kind]
	if !ok {
		return fmt.Errorf("unknown kind %q", s.Kind)
	}
	sp.SetKind(kind)
	start, err := nanos(s.StartTime)
	if err != nil {
		return fmt.Errorf("start_time: %w", err)
	}
	end, err := nanos(s.EndTime)
	if err != nil {
		return fmt.Errorf("end_time: %w", err)
	}
	sp.SetStartTimestamp(start)
	sp.SetEndTimestamp(end)
	code, ok := codes[s.Status.StatusCode]
	if !ok {
		return fmt.Errorf("unknown status code %q", s.Status.StatusCode)
	}
	sp.Status().SetCode(code)
	if s.Status.Description != nil {
		sp.Status().SetMessage(*s.Status.Description)
	}
	if err := putAttributes(sp.Attributes(), s.Attributes); err != nil {
		return fmt.Errorf("attributes: %w", err)
	}
	for i, e := range s.Events {
		ev := sp.Events().AppendEmpty()
		ev.SetName(e.Name)
		ts, err := nanos(e.Timestamp)
		if err != nil {
			return fmt.Errorf("event %d: timestamp: %w", i, err)
		}
		ev.SetTimestamp(ts)
		if err := putAttributes(ev.Attributes(), e.Attributes); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	for i, l := range s.Links {
		ln := sp.Links().AppendEmpty()
		ltid, lsid, err := ids(l.Context)
		if err != nil {
			return fmt.Errorf("link %d: %w", i, err)
		}
		ln.SetTraceID(ltid)
		ln.SetSpanID(lsid)
		if err := putTraceState(ln.TraceState(), l.Context); err != nil {
			return fmt.Errorf("link %d: %w", i, err)
		}
		lflags := l.Context.TraceFlags.Value&flagsTraceMask | flagHasIsRemote
		if l.Context.IsRemote {
			lflags |= flagParentRemote
		}
		ln.SetFlags(lflags)
		if err := putAttributes(ln.Attributes(), l.Attributes); err != nil {
			return fmt.Errorf("link %d: %w", i, err)
		}
	}
	return nil
}

// any-agent's kinds and status codes (its otel_types.py) in OTLP.
var (
	kinds = map[string]ptrace.SpanKind{
		"internal": ptrace.SpanKindInternal, "server": ptrace.SpanKindServer, "client": ptrace.SpanKindClient,
		"producer": ptrace.SpanKindProducer, "consumer": ptrace.SpanKindConsumer,
	}
	codes = map[string]ptrace.StatusCode{
		"unset": ptrace.StatusCodeUnset, "ok": ptrace.StatusCodeOk, "error": ptrace.StatusCodeError,
	}
)

// ids returns a context's trace and span ids: any-agent writes them as the
// decimal integers Python's OpenTelemetry holds (the 128-bit and 64-bit
// big-endian ids); null is the empty id.
func ids(c spanContext) (pcommon.TraceID, pcommon.SpanID, error) {
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	if c.TraceID != nil {
		n, ok := new(big.Int).SetString(c.TraceID.String(), 10)
		if !ok || n.Sign() < 0 || n.BitLen() > 128 {
			return tid, sid, fmt.Errorf("trace_id %s is not a 128-bit unsigned integer", c.TraceID)
		}
		n.FillBytes(tid[:])
	}
	if c.SpanID != nil {
		n, err := strconv.ParseUint(c.SpanID.String(), 10, 64)
		if err != nil {
			return tid, sid, fmt.Errorf("span_id: %w", err)
		}
		for i := range sid {
			sid[7-i] = byte(n >> (8 * i))
		}
	}
	return tid, sid, nil
}

// putTraceState writes a context's trace state entries as the W3C
// tracestate header (key=value, comma separated, in their order).
func putTraceState(ts pcommon.TraceState, c spanContext) error {
	kvs, err := members(c.TraceState.Entries)
	if err != nil {
		return fmt.Errorf("trace_state: %w", err)
	}
	var parts []string
	for _, kv := range kvs {
		var v string
		if err := json.Unmarshal(kv.val, &v); err != nil {
			return fmt.Errorf("trace_state %s: %w", kv.key, err)
		}
		parts = append(parts, kv.key+"="+v)
	}
	ts.FromRaw(strings.Join(parts, ","))
	return nil
}

func nanos(n json.Number) (pcommon.Timestamp, error) {
	if n == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(n.String(), 10, 64)
	return pcommon.Timestamp(v), err
}

func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// putAttributes writes a JSON object's members into m in their order.
func putAttributes(m pcommon.Map, raw json.RawMessage) error {
	kvs, err := members(raw)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if err := putValue(m.PutEmpty(kv.key), kv.val); err != nil {
			return fmt.Errorf("%s: %w", kv.key, err)
		}
	}
	return nil
}

type member struct {
	key string
	val json.RawMessage
}

// members returns a JSON object's members in their order (null: none).
func members(raw json.RawMessage) ([]member, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %s", raw)
	}
	var kvs []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		kvs = append(kvs, member{key: tok.(string), val: v})
	}
	return kvs, nil
}

// putValue sets v to the JSON value raw as OpenTelemetry's Python SDK holds
// it: a string, a bool, an integer (no fraction, no exponent) or a float,
// an array; null is the empty value, an object a key-value list.
func putValue(v pcommon.Value, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return errors.New("no value")
	}
	switch raw[0] {
	case 'n':
		return nil // empty
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return err
		}
		v.SetBool(b)
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		v.SetStr(s)
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		sl := v.SetEmptySlice()
		for i, it := range items {
			if err := putValue(sl.AppendEmpty(), it); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case '{':
		return putAttributes(v.SetEmptyMap(), raw)
	default:
		s := string(raw)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return err
			}
			v.SetDouble(f)
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		v.SetInt(n)
	}
	return nil
}
