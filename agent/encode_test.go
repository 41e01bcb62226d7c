package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// encodeSeeds are data members (raw JSON, or not) and sources covering
// what json.Marshal's compaction changes or refuses.
var encodeSeeds = []struct{ name, data, source string }{
	{"plain", `{"goal":"fix the build","tools":["grep","sed"],"n":-1.5e+3,"ok":true,"x":null}`, "coder/host-a/w1"},
	{"empty object", `{}`, "coder"},
	{"spaces in strings", `{"goal":"a b\tc"}`, "coder"},
	{"whitespace between tokens", `{ "a" : [1, 2] }`, "coder"},
	{"trailing newline", "{\"a\":1}\n", "coder"},
	{"less than", `{"a":"<"}`, "coder"},
	{"greater than", `{"a":">"}`, "coder"},
	{"ampersand", `{"a":"&"}`, "coder"},
	{"html in source", `{}`, "coder/<host>"},
	{"line separator alone", "{\"a\":\"\u2029\"}", "coder"},
	{"other three-byte character", `{"a":"€✓"}`, "coder"},
	{"line separator", "{\"a\":\"x\u2028y\u2029\"}", "coder"},
	{"escapes", `{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"}`, "coder"},
	{"bad escape", `{"a":"\x"}`, "coder"},
	{"control character", "{\"a\":\"\x01\"}", "coder"},
	{"invalid utf-8", "{\"a\":\"\xff\xfe\"}", "coder"},
	{"numbers", `[0,-0,1.0,1e5,1E-5,-12.34e+56]`, "coder"},
	{"bad numbers", `[01]`, "coder"},
	{"bad fraction", `[1.]`, "coder"},
	{"bad exponent", `[1e]`, "coder"},
	{"trailing comma", `{"a":1,}`, "coder"},
	{"two values", `{}{}`, "coder"},
	{"truncated", `{"a":[1,2`, "coder"},
	{"literal typo", `[tru]`, "coder"},
	{"deep", strings.Repeat("[", 1500) + strings.Repeat("]", 1500), "coder"},
	{"too deep for json", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), "coder"},
	{"empty", ``, "coder"},
}

func encodeEvent(data, source string) *events.Event {
	return &events.Event{
		SpecVersion: events.SpecVersion, ID: "0193a1b2-0000-7000-8000-000000000001", Source: source,
		Type: events.SessionStarted, Time: time.Date(2026, 11, 1, 12, 0, 0, 123, time.UTC),
		Subject: "s-1", DataContentType: events.ContentType, Seq: 1, Data: json.RawMessage(data),
	}
}

// checkEncode fails when encode and json.Marshal disagree on e.
func checkEncode(tb testing.TB, e *events.Event) {
	tb.Helper()
	got, gerr := encode(e)
	want, werr := json.Marshal(e)
	if (gerr != nil) != (werr != nil) {
		tb.Fatalf("encode(data %q) error %v, json.Marshal error %v", e.Data, gerr, werr)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("encode(data %q) = %q, json.Marshal = %q", e.Data, got, want)
	}
}

func TestEncodeIsJSONMarshal(t *testing.T) {
	for _, tc := range encodeSeeds {
		t.Run(tc.name, func(t *testing.T) {
			checkEncode(t, encodeEvent(tc.data, tc.source))
		})
	}
}

// The fast path is taken for a plain event, not only the fallback.
func TestEncodeSkipsCompaction(t *testing.T) {
	e := encodeEvent(encodeSeeds[0].data, encodeSeeds[0].source)
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !plainJSON(b) {
		t.Errorf("plainJSON(%s) = false, want true", b)
	}
}

func FuzzEncode(f *testing.F) {
	for _, tc := range encodeSeeds {
		f.Add(tc.data, tc.source)
	}
	f.Fuzz(func(t *testing.T, data, source string) {
		checkEncode(t, encodeEvent(data, source))
	})
}
