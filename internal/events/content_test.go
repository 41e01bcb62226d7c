package events

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// contentBase is a valid event with an extension, in one spelling.
const contentBase = `{"specversion":"1.0","id":"e1","source":"coder/h/w1","type":"agent.tool.called",` +
	`"time":"2026-11-29T10:00:00.123456Z","subject":"s1","datacontenttype":"application/json","seq":3,"trace":"t-1",` +
	`"data":{"task_id":4,"tool":"grep","hint":null,"ok":true,"duration_ms":5,"control":false}}`

func TestContentHash(t *testing.T) {
	base := decodeOK(t, contentBase)
	want, err := base.ContentHash()
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 64 {
		t.Fatalf("ContentHash = %q, want 64 hex digits", want)
	}
	tests := []struct {
		name string
		raw  string
		same bool
		diff []string // ContentDiff with the base
	}{
		{"same bytes", contentBase, true, nil},
		{"members reordered, white space, escapes, 1.0 for 1",
			`{ "data" : {"control":false,"duration_ms":5.0,"ok":true,"hint":null,"tool":"gr\u0065p","task_id":4},
			  "seq":3, "trace":"t-1", "subject":"s1","datacontenttype":"application/json","time":"2026-11-29T11:00:00.123456+01:00",
			  "type":"agent.tool.called","source":"coder/h/w1","id":"e1","specversion":"1.0"}`, true, nil},
		{"nanoseconds the database does not keep", strings.Replace(contentBase, ".123456Z", ".123456789Z", 1), true, nil},
		{"another microsecond", strings.Replace(contentBase, ".123456Z", ".123457Z", 1), false, []string{"time"}},
		{"other data", strings.Replace(contentBase, `"ok":true`, `"ok":false`, 1), false, []string{"data"}},
		{"other seq and extension", strings.Replace(strings.Replace(contentBase, `"seq":3`, `"seq":4`, 1), `"t-1"`, `"t-2"`, 1), false, []string{"seq", "trace"}},
		{"extension missing", strings.Replace(contentBase, `"trace":"t-1",`, "", 1), false, []string{"trace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeOK(t, tt.raw)
			got, err := e.ContentHash()
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.same {
				t.Errorf("ContentHash = %s, base %s; want same %v", got, want, tt.same)
			}
			if same, err := SameContent(base, e); err != nil || same != tt.same {
				t.Errorf("SameContent = %v, %v; want %v", same, err, tt.same)
			}
			diff, err := ContentDiff(base, e)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(diff, tt.diff) {
				t.Errorf("ContentDiff = %q, want %q", diff, tt.diff)
			}
		})
	}
}

func decodeOK(tb testing.TB, raw string) *Event {
	tb.Helper()
	e, err := Decode([]byte(raw))
	if err != nil {
		tb.Fatalf("Decode(%s): %v", raw, err)
	}
	return e
}

// An event of a year MarshalJSON refuses (an older database may hold one)
// still has a content hash, and its time counts.
func TestContentHashOfAnyYear(t *testing.T) {
	base := decodeOK(t, contentBase)
	seen := map[string]bool{}
	for _, y := range []int{-1, 0, 2026, 10000} {
		e := *base
		e.Time = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		h, err := e.ContentHash()
		if err != nil {
			t.Fatalf("ContentHash of year %d: %v", y, err)
		}
		if seen[h] {
			t.Fatalf("year %d hashes as another year", y)
		}
		seen[h] = true
	}
}

// SameContent says what the content hashes say, whether it finds the
// fields alike (a re-send spelled as stored) or has to hash.
func FuzzSameContent(f *testing.F) {
	f.Add([]byte(contentBase), []byte(contentBase))
	f.Add([]byte(contentBase), []byte(strings.Replace(contentBase, ".123456Z", ".123456999Z", 1)))
	f.Add([]byte(contentBase), []byte(strings.Replace(contentBase, ".123456Z", ".123457Z", 1)))
	f.Add([]byte(contentBase), []byte(strings.Replace(contentBase, `"trace":"t-1"`, `"trace":"t-2"`, 1)))
	f.Add([]byte(contentBase), []byte(strings.Replace(contentBase, `"ok":true,`, `"ok": true,`, 1)))
	f.Fuzz(func(t *testing.T, rawA, rawB []byte) {
		a, err := Decode(rawA)
		if err != nil {
			return
		}
		b, err := Decode(rawB)
		if err != nil {
			return
		}
		ha, err := a.ContentHash()
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.ContentHash()
		if err != nil {
			t.Fatal(err)
		}
		same, err := SameContent(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := ha == hb; same != want || (sameFields(a, b) && !want) {
			t.Fatalf("SameContent = %v (fields alike %v), want %v (hashes %s, %s)", same, sameFields(a, b), want, ha, hb)
		}
	})
}

// Two events differing in one field only are never alike field by field:
// the fast path of SameContent sees every field ContentHash does.
func TestSameFieldsSeesEveryField(t *testing.T) {
	base := decodeOK(t, contentBase)
	base.DataSchema = "https://example.com/v1"
	tests := []struct {
		name   string
		change func(e *Event)
	}{
		{"specversion", func(e *Event) { e.SpecVersion = "1.1" }},
		{"id", func(e *Event) { e.ID = "e2" }},
		{"source", func(e *Event) { e.Source = "coder/h/w2" }},
		{"type", func(e *Event) { e.Type = HintStripped }},
		{"time", func(e *Event) { e.Time = e.Time.Add(time.Microsecond) }},
		{"subject", func(e *Event) { e.Subject = "s2" }},
		{"datacontenttype", func(e *Event) { e.DataContentType = "text/json" }},
		{"seq", func(e *Event) { e.Seq++ }},
		{"dataschema", func(e *Event) { e.DataSchema = "" }},
		{"extension value", func(e *Event) { e.Extensions = map[string]any{"trace": "t-2"} }},
		{"extension gone", func(e *Event) { e.Extensions = nil }},
		{"data", func(e *Event) { e.Data = append([]byte(nil), strings.Replace(string(e.Data), "grep", "sed", 1)...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *base
			tt.change(&e)
			if sameFields(base, &e) {
				t.Fatalf("sameFields = true with another %s", tt.name)
			}
			if same, err := SameContent(base, &e); err != nil || same {
				t.Fatalf("SameContent = %v, %v with another %s; want false", same, err, tt.name)
			}
		})
	}
}

// The canonical form read with this package's parser is the one read with
// encoding/json, for any data and extensions the parser reads
// (canonicalMembers falls back to encoding/json for the rest).
func FuzzCanonicalMembers(f *testing.F) {
	for _, s := range []string{
		`{"task_id":4,"tool":"grep","hint":null,"ok":true,"duration_ms":5,"control":false}`,
		`{ "b" : [1, 2.50, -0, 1e3, 1E-7, {"z":1,"a":[]}], "a" : {"é":"\u00e9\ud83d\ude00\n\t\"\\/<>&", "":""} }`,
		`{"a":1,"a":2}`,
		`{"s":"\u2028\u2029\u0000\u001f\u007f","n":[[],[{}],null,true,false]}`,
		`{"b":1,"a":1,"ab":1,"B":1,"\u0061c":1}`,
	} {
		f.Add([]byte(s), "t-1")
	}
	f.Fuzz(func(t *testing.T, data []byte, trace string) {
		if !json.Valid(data) || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			return
		}
		e := decodeOK(t, contentBase)
		e.Data = data
		e.Extensions = map[string]any{"trace": trace, "n": json.Number("1.50")}
		raw, err := e.MarshalJSON()
		if err != nil {
			return
		}
		var tr tree
		if perr := tr.parse(raw); perr != nil {
			return // canonicalMembers falls back to canonicalMembersOf
		}
		got := tr.members()
		want, err := canonicalMembersOf(raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("members %d, want %d", len(got), len(want))
		}
		for k, w := range want {
			if g := got[k]; !bytes.Equal(g, w) {
				t.Fatalf("member %s = %s, want %s", k, g, w)
			}
		}
	})
}
