package events

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidTestdata(t *testing.T) {
	for _, l := range validLines(t) {
		if err := schemaCheck(t, l.raw); err != nil {
			t.Errorf("%s: schema rejects: %v", l.name, err)
		}
		ev, err := Decode(l.raw)
		if err != nil {
			t.Errorf("%s: Decode() error = %v", l.name, err)
			continue
		}
		if _, err := ev.Payload(); err != nil {
			t.Errorf("%s: Payload() error = %v", l.name, err)
		}
	}
}

func TestInvalidTestdata(t *testing.T) {
	for _, f := range invalidFiles(t) {
		t.Run(f.name, func(t *testing.T) {
			if err := schemaCheck(t, f.raw); err == nil {
				t.Errorf("schema accepts %s", f.raw)
			}
			ev, err := Decode(f.raw)
			if err == nil {
				t.Fatalf("Decode() = %+v, want an error", ev)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode() error = %T %v, want *Error", err, err)
			}
			if e.Reason != f.reason {
				t.Errorf("Decode() reason = %s, want %s (error: %v)", e.Reason, f.reason, err)
			}
		})
	}
}

// base is a valid agent.tool.called message; cases edit it.
const base = `{"specversion":"1.0","id":"0197639a-0000-7000-8000-000000000001","source":"skilllite/host-a/worker-3","type":"agent.tool.called","time":"2025-06-12T10:03:08.070Z","subject":"sess-1","datacontenttype":"application/json","seq":3,"data":{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":12,"control":false}}`

func edit(tb testing.TB, old, new string) []byte {
	tb.Helper()
	if strings.Count(base, old) != 1 {
		tb.Fatalf("edit: %q is not in base exactly once", old)
	}
	return []byte(strings.Replace(base, old, new, 1))
}

// TestDecodeEdgeCases pins the corner cases where encoding/json, JSON
// Schema and RFC 3339 readers tend to differ. Each case is checked against
// the schema as well, so a wrong expectation here fails loudly.
func TestDecodeEdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		raw    []byte
		reason Reason // "" for accepted
	}{
		{"base", []byte(base), ""},
		{"white space around", []byte(" \t\r\n" + base + "\n "), ""},
		{"seq 1.0 is an integer", edit(t, `"seq":3`, `"seq":1.0`), ""},
		{"seq 3e0", edit(t, `"seq":3`, `"seq":3e0`), ""},
		{"seq 30E-1", edit(t, `"seq":3`, `"seq":30E-1`), ""},
		{"seq 0.3e1", edit(t, `"seq":3`, `"seq":0.3e1`), ""},
		{"seq 2^53-1", edit(t, `"seq":3`, `"seq":9007199254740991`), ""},
		{"seq 2^53", edit(t, `"seq":3`, `"seq":9007199254740992`), ReasonSchema},
		{"seq 9.007199254740991e15", edit(t, `"seq":3`, `"seq":9.007199254740991e15`), ""},
		{"seq 1e16", edit(t, `"seq":3`, `"seq":1e16`), ReasonSchema},
		{"seq 1.5", edit(t, `"seq":3`, `"seq":1.5`), ReasonSchema},
		{"seq 1e-1", edit(t, `"seq":3`, `"seq":1e-1`), ReasonSchema},
		{"seq -1", edit(t, `"seq":3`, `"seq":-1`), ReasonSchema},
		{"seq huge exponent", edit(t, `"seq":3`, `"seq":1e9999999999`), ReasonSchema},
		{"duration -0", edit(t, `"duration_ms":12`, `"duration_ms":-0`), ""},
		{"duration 0e99999999", edit(t, `"duration_ms":12`, `"duration_ms":0e99999999`), ""},
		{"duration -0.0e-5", edit(t, `"duration_ms":12`, `"duration_ms":-0.0e-5`), ""},
		{"duration 0e exponent overflows int64", edit(t, `"duration_ms":12`, `"duration_ms":0e99999999999999999999`), ReasonSchema},
		{"duration 12.000000000000000000001", edit(t, `"duration_ms":12`, `"duration_ms":12.000000000000000000001`), ReasonSchema},
		{"task_id 1.00000e+00", edit(t, `"task_id":1`, `"task_id":1.00000e+00`), ""},
		{"time lower-case t and z", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12t10:03:08.070z`), ""},
		{"time offset", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T12:03:08.070+02:00`), ""},
		{"time -00:00", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08-00:00`), ""},
		{"time leap second", edit(t, `2025-06-12T10:03:08.070Z`, `2016-12-31T23:59:60Z`), ""},
		{"time leap second with offset", edit(t, `2025-06-12T10:03:08.070Z`, `2016-12-31T15:59:60-08:00`), ""},
		{"time leap second at 12:59", edit(t, `2025-06-12T10:03:08.070Z`, `2016-12-31T12:59:60Z`), ReasonSchema},
		{"time long fraction", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08.0701234567890123Z`), ""},
		{"time empty fraction", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08.Z`), ReasonSchema},
		{"time Feb 29 leap year", edit(t, `2025-06-12T10:03:08.070Z`, `2024-02-29T00:00:00Z`), ""},
		{"time Feb 29 common year", edit(t, `2025-06-12T10:03:08.070Z`, `2025-02-29T00:00:00Z`), ReasonSchema},
		{"time year 0001", edit(t, `2025-06-12T10:03:08.070Z`, `0001-01-01T00:00:00Z`), ""}, // year 0000: TestDecodeYearRange
		{"time hour 24", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T24:00:00Z`), ReasonSchema},
		{"time offset +24:00", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08+24:00`), ReasonSchema},
		{"time offset without colon", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08+0200`), ReasonSchema},
		{"time signed hour (the format alone would take it)", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T+1:-0:08Z`), ReasonSchema},
		{"time signed offset", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:08+-1:00`), ReasonSchema},
		{"time non-ASCII digit", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:03:0٨Z`), ReasonSchema},
		{"time negative minute", edit(t, `2025-06-12T10:03:08.070Z`, `2025-06-12T10:-3:08Z`), ReasonSchema},
		{"time one-digit month", edit(t, `2025-06-12T10:03:08.070Z`, `2025-6-12T10:03:08.07Z`), ReasonSchema},
		{"escaped key", edit(t, `"seq":3`, `"s\u0065q":3`), ""},
		{"escaped type", edit(t, `"agent.tool.called"`, `"agent.tool.c\u0061lled"`), ""},
		{"escaped slash in source", edit(t, `skilllite/host-a`, `skilllite\/host-a`), ""},
		{"surrogate pair in goal-like text", edit(t, `"tool":"grep"`, `"tool":"gr\ud83d\ude00ep"`), ""},
		{"escaped NUL in string", edit(t, `"tool":"grep"`, `"tool":"\u0000"`), ""},
		{"extension string", edit(t, `"seq":3,`, `"seq":3,"traceparent":"00-abc-01",`), ""},
		{"extension number", edit(t, `"seq":3,`, `"seq":3,"partition":1e400,`), ""},
		{"extension boolean", edit(t, `"seq":3,`, `"seq":3,"sampled":true,`), ""},
		{"extension array", edit(t, `"seq":3,`, `"seq":3,"tags":["a"],`), ReasonSchema},
		{"extension upper case", edit(t, `"seq":3,`, `"seq":3,"Trace":"x",`), ReasonSchema},
		{"dataschema", edit(t, `"seq":3,`, `"seq":3,"dataschema":"https://schema.evosignal.dev/v1/agent.tool.called.json",`), ""},
		{"empty dataschema", edit(t, `"seq":3,`, `"seq":3,"dataschema":"",`), ""},
		{"source one segment", edit(t, `skilllite/host-a/worker-3`, `skilllite`), ""},
		{"source odd segments", edit(t, `skilllite/host-a/worker-3`, `skilllite/a:b/%20/~x`), ""},
		{"source 256 characters", edit(t, `skilllite/host-a/worker-3`, "skilllite/"+strings.Repeat("h", 246)), ""},
		{"subject 128 multibyte characters", edit(t, `"sess-1"`, `"`+strings.Repeat("é", 128)+`"`), ""},
		{"subject 129 multibyte characters", edit(t, `"sess-1"`, `"`+strings.Repeat("é", 129)+`"`), ReasonSchema},
		{"error 4096 multibyte characters", edit(t, `"control":false`, `"control":false,"error":"`+strings.Repeat("é", 4096)+`"`), ""},
		{"unknown type with valid envelope", edit(t, `"agent.tool.called"`, `"agent.x"`), ReasonUnknownType},
		{"empty type", edit(t, `"agent.tool.called"`, `""`), ReasonSchema},
		{"unknown type, data not an object", []byte(strings.Replace(strings.Replace(base, `"agent.tool.called"`, `"agent.x"`, 1),
			`{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":12,"control":false}`, `"x"`, 1)), ReasonSchema},
		{"nested too deep", []byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)), ReasonMalformed},
		{"top-level number", []byte("3"), ReasonMalformed},
		{"deeply nested data member", edit(t, `"control":false`, `"control":false,"x":`+strings.Repeat("[", 500)+strings.Repeat("]", 500)), ReasonSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serr := schemaCheck(t, tt.raw)
			if got, want := serr == nil, tt.reason == ""; got != want {
				t.Errorf("schema accepts = %v, want %v (schema: %v)", got, want, serr)
			}
			_, err := Decode(tt.raw)
			var got Reason
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Decode() error = %T %v, want *Error", err, err)
				}
				got = e.Reason
			}
			if got != tt.reason {
				t.Errorf("Decode() reason = %q, want %q (error: %v)", got, tt.reason, err)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	raw := edit(t, `"seq":3,`, `"seq":30E-1,"traceparent":"00-abc-01","partition":7,"sampled":false,"dataschema":"x",`)
	raw = []byte(strings.Replace(string(raw), `"task_id":1`, `"task_id":1.0e0`, 1))
	raw = []byte(strings.Replace(string(raw), `"duration_ms":12`, `"duration_ms":-0`, 1))
	raw = []byte(strings.Replace(string(raw), `2025-06-12T10:03:08.070Z`, `2025-06-12t12:03:08.0701234567891+02:00`, 1))
	ev, err := Decode(raw)
	if err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	want := Event{
		SpecVersion: SpecVersion, ID: "0197639a-0000-7000-8000-000000000001", Source: "skilllite/host-a/worker-3",
		Type: ToolCalled, Time: time.Date(2025, 6, 12, 10, 3, 8, 70123456, time.UTC), Subject: "sess-1",
		DataContentType: ContentType, Seq: 3, DataSchema: "x",
		Extensions: map[string]any{"traceparent": "00-abc-01", "partition": json.Number("7"), "sampled": false},
		Data:       json.RawMessage(`{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":0,"control":false}`),
	}
	if !eventsEqual(*ev, want) {
		t.Errorf("Decode() = %+v\nwant %+v", *ev, want)
	}
	if ev.Time.Location() != time.UTC {
		t.Errorf("Decode().Time location = %v, want UTC", ev.Time.Location())
	}
}

func TestDecodeLeapSecond(t *testing.T) {
	ev, err := Decode(edit(t, `2025-06-12T10:03:08.070Z`, `2016-12-31T23:59:60.5Z`))
	if err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if got, want := ev.Time, time.Date(2017, 1, 1, 0, 0, 0, 5e8, time.UTC); !got.Equal(want) {
		t.Errorf("Time = %v, want %v", got, want)
	}
}

func TestDecodeDoesNotAliasInput(t *testing.T) {
	raw := []byte(base)
	ev, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := string(ev.Data) + ev.ID + ev.Source + ev.Subject
	for i := range raw {
		raw[i] = 'x'
	}
	if got := string(ev.Data) + ev.ID + ev.Source + ev.Subject; got != want {
		t.Errorf("event changed with its input: %q, want %q", got, want)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"enum", []byte(strings.Replace(strings.Replace(base, `"agent.tool.called"`, `"agent.plan.created"`, 1),
			`{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":12,"control":false}`, `{"tasks":[],"origin":"foo"}`, 1)),
			`schema_violation at /data/origin: "foo" is not one of model, fallback, empty`},
		{"nested", []byte(strings.Replace(strings.Replace(base, `"agent.tool.called"`, `"agent.plan.created"`, 1),
			`{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":12,"control":false}`,
			`{"tasks":[{"id":1,"description":"a","tool_hint":null,"completed":false},{"id":2,"description":"b","completed":false}],"origin":"model"}`, 1)),
			`schema_violation at /data/tasks/1/tool_hint: missing required property (it may be null, but must be present)`},
		{"unknown data property", edit(t, `"control":false`, `"control":false,"a/b~":1`), `schema_violation at /data/a~1b~0: unknown property`},
		{"wrong case attribute", edit(t, `"id":`, `"ID":`), `schema_violation at /ID: unknown attribute (an extension name is 1 to 20 lower-case letters or digits)`},
		{"missing attribute", edit(t, `"subject":"sess-1",`, ``), `schema_violation at /subject: missing required attribute`},
		{"seq", edit(t, `"seq":3`, `"seq":0`), `schema_violation at /seq: 0 is less than the minimum 1`},
		{"type", edit(t, `"ok":true`, `"ok":"yes"`), `schema_violation at /data/ok: got string, want boolean`},
		{"nullable type", edit(t, `"hint":null`, `"hint":1`), `schema_violation at /data/hint: got number, want string or null`},
		{"unknown type", edit(t, `"agent.tool.called"`, `"agent.x"`), `unknown_type at /type: "agent.x" is not a v1 event type`},
		{"duplicate", edit(t, `"seq":3`, `"seq":3,"seq":3`), `malformed_json: duplicate member name "seq"`},
		{"syntax", []byte(`{"a" 1}`), `malformed_json: invalid character '1' after object key at offset 5`},
		{"truncated", []byte(`{"a":`), `malformed_json: unexpected end of JSON input`},
		{"not an object", []byte(`[]`), `malformed_json: got array, want a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.raw)
			if err == nil {
				t.Fatalf("Decode() error = nil, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Decode() error = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	tests := []struct {
		reason Reason
		want   error
	}{
		{ReasonMalformed, ErrMalformed},
		{ReasonUnknownType, ErrUnknownType},
		{ReasonSchema, ErrInvalid},
	}
	sentinels := []error{ErrMalformed, ErrUnknownType, ErrInvalid}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			err := error(&Error{Reason: tt.reason})
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.want; got != want {
					t.Errorf("errors.Is(%s, %v) = %v, want %v", tt.reason, s, got, want)
				}
			}
		})
	}
}

// eventsEqual compares events field by field (time with Equal).
func eventsEqual(a, b Event) bool {
	if !a.Time.Equal(b.Time) {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb) &&
		a.SpecVersion == b.SpecVersion && a.DataContentType == b.DataContentType
}

// TestDecodeYearRange: a date-time the schema accepts whose UTC instant is
// outside years 0001-9999 is a schema violation at /time (the one place
// Decode is stricter than the schema; see schema/README.md), and the
// instants at the edges of the range are accepted.
func TestDecodeYearRange(t *testing.T) {
	tests := []struct {
		name string
		time string
		ok   bool
	}{
		{"year 0 east offset", "0000-01-01T00:00:00+23:59", false},
		{"year 0 UTC", "0000-06-01T00:00:00Z", false},
		{"year 9999 west offset", "9999-12-31T23:59:59-23:59", false},
		{"year 9999 leap second west", "9999-12-31T15:59:60-08:00", false},
		{"first instant", "0001-01-01T00:00:00Z", true},
		{"first instant with offset", "0001-01-01T01:00:00+01:00", true},
		{"last instant", "9999-12-31T23:59:59.999999999Z", true},
		{"last instant with offset", "9999-12-31T22:59:59-01:00", true},
		{"year 1 local, year 0 UTC", "0001-01-01T00:00:00+00:01", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := edit(t, `"2025-06-12T10:03:08.070Z"`, `"`+tt.time+`"`)
			if err := schemaCheck(t, raw); err != nil {
				t.Fatalf("schema rejects %s: %v (the case must be schema-valid)", tt.time, err)
			}
			ev, err := Decode(raw)
			if tt.ok {
				if err != nil {
					t.Fatalf("Decode(time %s) error = %v, want none", tt.time, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonSchema || e.Path != "/time" || !strings.Contains(e.Msg, "years 0001-9999") {
				t.Fatalf("Decode(time %s) = %+v, %v; want a schema_violation at /time naming years 0001-9999", tt.time, ev, err)
			}
		})
	}
}
