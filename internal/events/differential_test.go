package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests in this file check the central promise of Decode: it accepts a
// message if and only if the JSON Schema of the latest version of the
// contract (schema.Event) does (for I-JSON messages; see schemaCheck).

// agree fails tb if Decode and the schema disagree on raw, and checks that an
// accepted event survives a round trip.
func agree(tb testing.TB, name string, raw []byte) {
	tb.Helper()
	ev, err := Decode(raw)
	serr := schemaCheck(tb, raw)
	if err != nil && serr == nil && outOfYearRange(raw) {
		// The one documented exception (schema/README.md, "time"): the
		// schema's date-time format cannot see that a local time's UTC
		// instant leaves years 0001-9999; Decode rejects it.
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "years 0001-9999") {
			tb.Fatalf("%s: Decode error = %v, want the year range violation\nmessage: %q", name, err, raw)
		}
		return
	}
	if (err == nil) != (serr == nil) {
		tb.Fatalf("%s: Decode error = %v, schema error = %v; they must agree\nmessage: %q", name, err, serr, raw)
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			tb.Fatalf("%s: Decode error = %T %v, want *Error", name, err, err)
		}
		return
	}
	if _, err := ev.Payload(); err != nil {
		tb.Fatalf("%s: Payload() error = %v\nmessage: %q", name, err, raw)
	}
	if !InYearRange(ev.Time) {
		tb.Fatalf("%s: Decode accepted time %s, outside years 0001-9999 UTC\nmessage: %q", name, ev.Time, raw)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		tb.Fatalf("%s: json.Marshal(Decode()) error = %v", name, err)
	}
	ev2, err := Decode(b)
	if err != nil {
		tb.Fatalf("%s: Decode(json.Marshal(Decode())) error = %v\nre-encoded: %s", name, err, b)
	}
	if !eventsEqual(*ev, *ev2) {
		tb.Fatalf("%s: round trip changed the event\nfirst:  %+v\nsecond: %+v", name, *ev, *ev2)
	}
}

// outOfYearRange says whether raw has a top-level time that is a valid
// date-time whose UTC instant is outside years 0001-9999.
func outOfYearRange(raw []byte) bool {
	var probe struct {
		Time *string `json:"time"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Time == nil {
		return false
	}
	at, ok := parseDateTime([]byte(*probe.Time))
	return ok && !InYearRange(at)
}

// replacements are the values every leaf of a sample is swapped for.
var replacements = []string{
	`null`, `true`, `""`, `"x"`, `"model"`, `"unknown"`, `"2025-06-12T10:03:08Z"`, `0`, `-1`, `1`, `1.0`, `1.5`, `-0`, `1e2`,
	`9007199254740991`, `9007199254740992`, `[]`, `{}`, `[1]`, `["x"]`, `[""]`,
	`[{"id":1,"description":"d","tool_hint":null,"completed":false}]`,
	`[{"id":1,"description":"d","completed":false}]`,
	`"` + strings.Repeat("é", 129) + `"`, `"` + strings.Repeat("x", 4097) + `"`,
}

// TestDifferentialMutations swaps every value of every sample event for
// each of the replacements, removes each member and adds unknown ones, and
// checks that Decode and the schema agree on all of them.
func TestDifferentialMutations(t *testing.T) {
	lines := validLines(t)
	// One line per event type is enough, plus all plan events (they hold
	// the nested task lists).
	seen := map[string]bool{}
	n := 0
	for _, l := range lines {
		var probe struct{ Type string }
		if err := json.Unmarshal(l.raw, &probe); err != nil {
			t.Fatal(err)
		}
		if seen[probe.Type] && (testing.Short() || !strings.HasPrefix(probe.Type, "agent.plan.")) {
			continue
		}
		seen[probe.Type] = true
		var doc any
		dec := json.NewDecoder(bytes.NewReader(l.raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		for _, m := range mutations(doc) {
			b, err := json.Marshal(m.doc)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, l.name+" "+m.what, b)
			n++
		}
	}
	t.Logf("%d mutated messages", n)
}

type mutation struct {
	what string
	doc  any
}

// mutations returns copies of doc with one change each.
func mutations(doc any) []mutation {
	var out []mutation
	var walk func(path string, v any, set func(any) any)
	walk = func(path string, v any, set func(any) any) {
		for _, r := range replacements {
			var rv any
			dec := json.NewDecoder(strings.NewReader(r))
			dec.UseNumber()
			if err := dec.Decode(&rv); err != nil {
				panic(err)
			}
			out = append(out, mutation{path + "=" + r, set(rv)})
		}
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				out = append(out, mutation{path + "/" + k + " removed", set(without(v, k))})
				upper := strings.ToUpper(k[:1]) + k[1:]
				out = append(out, mutation{path + "/" + k + " as " + upper, set(renamed(v, k, upper))})
				walk(path+"/"+k, v[k], func(nv any) any { return set(with(v, k, nv)) })
			}
			for _, extra := range []string{"extra", "x_y", "abcdefghijklmnopqrst"} {
				out = append(out, mutation{path + " +" + extra, set(with(v, extra, "1"))})
			}
		case []any:
			for i := range v {
				walk(fmt.Sprintf("%s/%d", path, i), v[i], func(nv any) any {
					c := slices.Clone(v)
					c[i] = nv
					return set(c)
				})
			}
		}
	}
	walk("", doc, func(v any) any { return v })
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		c[kk] = vv
	}
	c[k] = v
	return c
}

func without(m map[string]any, k string) map[string]any {
	c := with(m, k, nil)
	delete(c, k)
	return c
}

func renamed(m map[string]any, from, to string) map[string]any {
	c := without(m, from)
	c[to] = m[from]
	return c
}

// FuzzDecode checks that Decode and the v1 schema agree on any input, and
// that an accepted event round-trips. Seeds: every test data message and
// testdata/fuzz/FuzzDecode (findings of earlier runs).
func FuzzDecode(f *testing.F) {
	for _, l := range validLines(f) {
		f.Add(l.raw)
	}
	for _, c := range invalidFiles(f) {
		f.Add(c.raw)
	}
	f.Add([]byte(base))
	f.Fuzz(func(t *testing.T, raw []byte) {
		agree(t, "input", raw)
	})
}

// TestFuzzCorpusFormat checks the checked-in seed corpus (named after what
// each input exercises) is in the format go test reads, so that none is
// silently skipped.
func TestFuzzCorpusFormat(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if len(files) == 0 {
		t.Fatal("no seed corpus under testdata/fuzz")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("go test fuzz v1\n")) {
			t.Errorf("%s is not a fuzz corpus file", f)
		}
	}
}

// place is one spot in a sample event where FuzzDecodeMember puts its
// value: set replaces the value there; rename, for an object member, renames
// it instead.
type place struct {
	set    func(v any) any
	rename func(name string) any
}

func places(doc any) []place {
	var out []place
	var walk func(v any, set func(any) any)
	walk = func(v any, set func(any) any) {
		out = append(out, place{set: set})
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				out = append(out, place{
					set:    func(nv any) any { return set(with(v, k, nv)) },
					rename: func(name string) any { return set(renamed(v, k, name)) },
				})
				walk(v[k], func(nv any) any { return set(with(v, k, nv)) })
			}
		case []any:
			for i := range v {
				walk(v[i], func(nv any) any {
					c := slices.Clone(v)
					c[i] = nv
					return set(c)
				})
			}
		}
	}
	walk(doc, func(v any) any { return v })
	return out
}

// FuzzDecodeMember puts a fuzzed JSON value (or member name) into one place
// of a sample event of each type, and checks that Decode and the schema
// agree: the fuzzer spends its time on values, not on breaking the syntax.
func FuzzDecodeMember(f *testing.F) {
	var docs []any
	seen := map[string]bool{}
	for _, l := range validLines(f) {
		var probe struct{ Type string }
		if err := json.Unmarshal(l.raw, &probe); err != nil {
			f.Fatal(err)
		}
		if seen[probe.Type] {
			continue
		}
		seen[probe.Type] = true
		var doc any
		dec := json.NewDecoder(bytes.NewReader(l.raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			f.Fatal(err)
		}
		docs = append(docs, doc)
	}
	for _, r := range replacements {
		f.Add(uint8(len(r)), uint8(len(r)*7), []byte(r), "")
	}
	f.Add(uint8(1), uint8(12), []byte(`"2016-12-31T23:59:60Z"`), "")
	f.Add(uint8(2), uint8(5), []byte(`1`), "s\u0065q")
	f.Fuzz(func(t *testing.T, doc, at uint8, value []byte, name string) {
		d := docs[int(doc)%len(docs)]
		ps := places(d)
		p := ps[int(at)%len(ps)]
		var m any
		if name != "" && p.rename != nil {
			m = p.rename(name)
		} else {
			if !json.Valid(value) {
				return
			}
			m = p.set(json.RawMessage(value))
		}
		b, err := json.Marshal(m)
		if err != nil {
			return
		}
		agree(t, "member", b)
	})
}

// TestDifferentialRuleArms: a session start with per-rule arms (v1.4
// assignment rules), and every mutation of it, is judged alike by Decode
// and the schema, and decodes to its arms.
func TestDifferentialRuleArms(t *testing.T) {
	raw := []byte(`{"specversion":"1.0","id":"0197639a-11aa-7d00-8a6e-3b2f0c1d4e60","source":"coder/ci-runner-2","type":"agent.session.started","time":"2025-06-13T08:12:40.511Z","subject":"ci-50119-rule-arms","datacontenttype":"application/json","seq":1,"data":{"goal":"Fix the lint errors","agent":"coder","agent_version":"2.1.0","model":"gpt-5-mini","tools":["run_command","write_file"],"ruleset":"rs-3017c5f5c943","rules":["prefer:coding:run_command"],"assignment":{"ruleset":"rs-3017c5f5c943","arm":"rules","holdout":0.1,"unit":"session","rules":[{"id":"prefer:coding:run_command","arm":"rules","holdout":0.2},{"id":"avoid:coding:write_file","arm":"holdout","holdout":0.2}]}}}`)
	agree(t, "rule arms", raw)
	ev, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []RuleArm{{ID: "prefer:coding:run_command", Arm: ArmRules, Holdout: 0.2}, {ID: "avoid:coding:write_file", Arm: ArmHoldout, Holdout: 0.2}}
	d, err := ev.Payload()
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*SessionStartedData).Assignment.Rules; !slices.Equal(got, want) {
		t.Errorf("rule arms = %+v, want %+v", got, want)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range mutations(doc) {
		b, err := json.Marshal(m.doc)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, "rule arms "+m.what, b)
		n++
	}
	t.Logf("%d mutated messages", n)
}
