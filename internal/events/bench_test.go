package events

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// benchMessages returns a typical agent.plan.updated (six tasks) and
// agent.tool.called message.
func benchMessages(tb testing.TB) map[string][]byte {
	tb.Helper()
	at := time.Date(2025, 6, 12, 10, 3, 8, 70e6, time.UTC)
	tasks := []Task{
		{ID: 1, Description: "Run TestUpload five times", ToolHint: ptr("run_command"), Completed: true},
		{ID: 2, Description: "Read the upload handler", ToolHint: ptr("read_file"), Completed: true},
		{ID: 4, Description: "Read the retry helper", ToolHint: ptr("read_file")},
		{ID: 5, Description: "Guard the retry state with a mutex", ToolHint: ptr("write_file")},
		{ID: 6, Description: "Run TestUpload five times again", ToolHint: ptr("run_command")},
		{ID: 7, Description: "Summarize the fix in the PR description"},
	}
	out := map[string][]byte{}
	for name, d := range map[string]struct {
		typ  Type
		data any
	}{
		"plan.updated": {PlanUpdated, PlanUpdatedData{Replan: 1, Trigger: TriggerModel, Reason: "The race is in the retry helper, not in the handler",
			Tasks: tasks, Kept: []int64{1, 2}, Dropped: []Task{{ID: 3, Description: "Patch the race in the handler", ToolHint: ptr("write_file")}}, Valid: true}},
		"tool.called": {ToolCalled, ToolCalledData{TaskID: ptr(int64(4)), Tool: "read_file", Hint: ptr("read_file"), OK: true, DurationMS: 5}},
	} {
		ev, err := New("skilllite/host-a/worker-3", "sess-9a40b7e1", 12, d.typ, at, d.data)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func BenchmarkDecode(b *testing.B) {
	for name, raw := range benchMessages(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeParallel(b *testing.B) {
	for name, raw := range benchMessages(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := Decode(raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkPayload: of an event from Decode (which kept its typed data),
// and of the same event built otherwise (the data read again).
func BenchmarkPayload(b *testing.B) {
	for name, raw := range benchMessages(b) {
		ev, err := Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		built := &Event{Type: ev.Type, Data: ev.Data}
		for kind, e := range map[string]*Event{"decoded": ev, "built": built} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Payload(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSchemaValidate is the reference: parse with encoding/json and
// validate with the compiled JSON Schema.
func BenchmarkSchemaValidate(b *testing.B) {
	sch := eventSchema(b)
	for name, raw := range benchMessages(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
				if err != nil {
					b.Fatal(err)
				}
				if err := sch.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSameContent compares an event with a re-send of it, decoded
// from the same bytes (the fields alike: no hashing) and from other
// spelling (white space in data: both content hashes).
func BenchmarkSameContent(b *testing.B) {
	for name, raw := range benchMessages(b) {
		a, err := Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		same, err := Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		other, err := Decode(bytes.ReplaceAll(raw, []byte(`,"`), []byte(`, "`)))
		if err != nil {
			b.Fatal(err)
		}
		for spelling, e := range map[string]*Event{"same-bytes": same, "other-spelling": other} {
			b.Run(name+"/"+spelling, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if ok, err := SameContent(a, e); err != nil || !ok {
						b.Fatalf("SameContent = %v, %v", ok, err)
					}
				}
			})
		}
	}
}
