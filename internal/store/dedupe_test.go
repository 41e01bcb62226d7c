package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// decode is events.Decode for tests.
func decode(tb testing.TB, raw string) *events.Event {
	tb.Helper()
	e, err := events.Decode([]byte(raw))
	if err != nil {
		tb.Fatalf("Decode(%s): %v", raw, err)
	}
	return e
}

// A re-send of a stored event is a duplicate, however it is spelled: other
// member order and white space, its time with an offset and nanoseconds the
// database does not keep, its extensions and dataschema (kept in ext).
func TestIdenticalResendIsADuplicate(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	first := decode(t, `{"specversion":"1.0","id":"r1","source":"coder/h/w1","type":"agent.tool.called",`+
		`"time":"2026-11-29T10:00:00.123456789Z","subject":"s1","datacontenttype":"application/json","seq":3,`+
		`"dataschema":"https://example.com/v1","trace":"t-1","n":1.50,`+
		`"data":{"task_id":4,"tool":"grep","hint":null,"ok":true,"duration_ms":5,"control":false,"error":"é"}}`)
	again := decode(t, `{"data":{"error":"\u00e9","control":false,"duration_ms":5,"ok":true,"hint":null,"tool":"grep","task_id":4},
		"n":1.50,"trace":"t-1","dataschema":"https://example.com/v1","seq":3,"datacontenttype":"application/json","subject":"s1",
		"time":"2026-11-29T12:00:00.1234567+02:00","type":"agent.tool.called","source":"coder/h/w1","id":"r1","specversion":"1.0"}`)
	raw, _ := json.Marshal(first)
	res, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: first, Raw: raw}, {Event: again}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 1, Duplicates: 1}); res != want {
		t.Fatalf("Write of an event and its re-send = %+v, want %+v", res, want)
	}
	// And against the stored row, in later batches.
	for _, e := range []*events.Event{first, again} {
		res, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: e}}})
		if err != nil {
			t.Fatal(err)
		}
		if want := (Result{Duplicates: 1}); res != want {
			t.Fatalf("Write of a re-send of a stored event = %+v, want %+v", res, want)
		}
	}
}

// A different event under a stored (source, id), or one earlier in the
// batch, is dead-lettered as conflicting_duplicate with both content
// hashes; the first one stays.
func TestConflictingDuplicateIsDeadLettered(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	a := newEvent(t, "coder/h/w1", "s1", 1)
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{{Event: a}}}); err != nil {
		t.Fatal(err)
	}
	other := func(e *events.Event, data string) *events.Event {
		c := *e
		c.Data = json.RawMessage(data)
		c.Time = c.Time.Add(time.Second)
		return &c
	}
	a2 := other(a, `{"task_id":1,"tool":"sed","hint":null,"ok":false,"duration_ms":5,"control":false}`)
	b := newEvent(t, "coder/h/w1", "s1", 2)
	b2 := other(b, `{"task_id":2,"tool":"awk","hint":null,"ok":true,"duration_ms":5,"control":false}`)
	res, err := s.Write(ctx, Batch{Origin: FromNATS, Stream: "EVO", Position: 3, Items: []Item{
		{Event: a2, Raw: []byte("a2"), StreamSeq: 1, Subject: "evo.coder"},
		{Event: b, StreamSeq: 2}, {Event: b2, Raw: []byte("b2"), StreamSeq: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 1, DeadLetters: 2}); res != want {
		t.Fatalf("Write = %+v, want %+v", res, want)
	}
	hash := func(e *events.Event) string {
		h, err := e.ContentHash()
		if err != nil {
			t.Fatal(err)
		}
		return "sha256:" + h
	}
	rows, err := s.DB().Query(`SELECT reason_code, reason, id, raw, stream_seq FROM dead_letters ORDER BY stream_seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for _, want := range []struct {
		id, raw, where string
		first, dup     *events.Event
	}{
		{a.ID, "a2", "is already stored", a, a2},
		{b.ID, "b2", "came earlier in this batch", b, b2},
	} {
		if !rows.Next() {
			t.Fatalf("no dead letter for %s", want.raw)
		}
		var code, reason, id, raw string
		var seq int
		if err := rows.Scan(&code, &reason, &id, &raw, &seq); err != nil {
			t.Fatal(err)
		}
		if code != ReasonConflictingDuplicate || id != want.id || raw != want.raw {
			t.Errorf("dead letter %s %s %q, want %s %s %q", code, id, raw, ReasonConflictingDuplicate, want.id, want.raw)
		}
		for _, part := range []string{want.where, "(data, time differ)", "that one has content hash " + hash(want.first), "this one " + hash(want.dup)} {
			if !strings.Contains(reason, part) {
				t.Errorf("reason %q lacks %q", reason, part)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var tool string
	if err := s.DB().QueryRow(`SELECT string_agg(tool, ',' ORDER BY seq) FROM tool_calls`).Scan(&tool); err != nil || tool != "grep,grep" {
		t.Fatalf("tool_calls = %q (%v), want grep,grep: the first events stay", tool, err)
	}
}

// The stored event that confirm rebuilds from its columns is the event
// written, field by field (its time to the microsecond): data as sent,
// extensions and dataschema as decoded. So a re-send spelled as it was
// stored is found the same without hashing (events.SameContent), which is
// what keeps re-sent batches cheap; if the write path ever rewrote data,
// this fails.
func TestConfirmRebuildsTheEventAsWritten(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	written := []*events.Event{
		newEvent(t, "coder/h/w1", "s1", 1),
		decode(t, `{"specversion":"1.0","id":"r1","source":"coder/h/w1","type":"agent.tool.called",`+
			`"time":"2026-11-29T10:00:00.123456Z","subject":"s1","datacontenttype":"application/json","seq":3,`+
			`"dataschema":"https://example.com/v1","trace":"t-1","n":1.50,"flag":true,`+
			`"data":{ "task_id":4, "tool":"grep","hint":null,"ok":true,"duration_ms":5,"control":false,"error":"é\u00e9"}}`),
	}
	var items []Item
	var hashes []uint64
	for _, e := range written {
		items = append(items, Item{Event: e})
		hashes = append(hashes, KeyHash(e.Source, e.ID))
	}
	if _, err := s.Write(ctx, Batch{Origin: FromFile, Items: items}); err != nil {
		t.Fatal(err)
	}
	stored, err := s.confirm(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range written {
		got := stored[key{e.Source, e.ID}]
		if got == nil {
			t.Fatalf("confirm found no stored event %s", e.ID)
		}
		if !got.Time.Equal(e.Time) {
			t.Errorf("stored time %v, want %v", got.Time, e.Time)
		}
		g, w := exported(got), exported(e)
		g.Time, w.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("stored event rebuilt as\n%#v\nwant\n%#v", g, w)
		}
	}
}

// exported is e's exported fields: what an event is, without the typed data
// Decode keeps alongside (see events.Event.Payload).
func exported(e *events.Event) events.Event {
	return events.Event{SpecVersion: e.SpecVersion, ID: e.ID, Source: e.Source, Type: e.Type, Time: e.Time,
		Subject: e.Subject, DataContentType: e.DataContentType, Seq: e.Seq, DataSchema: e.DataSchema,
		Extensions: e.Extensions, Data: e.Data}
}
