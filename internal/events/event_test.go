package events

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func ptr[T any](v T) *T { return &v }

// payloads has one data value of each type, with every optional field set.
var payloads = []struct {
	typ  Type
	data any
}{
	{SessionStarted, &SessionStartedData{Goal: "g", Agent: "skilllite", AgentVersion: "0.9.4", Model: "m", Tools: []string{"grep"}, TaskType: "refactor", Ruleset: "2025-06-10.2", Rules: []string{"r-1"}}},
	{PlanCreated, &PlanCreatedData{Tasks: []Task{{ID: 1, Description: "d", ToolHint: ptr("grep"), TaskType: "search"}, {ID: 2, Description: "e", Completed: true}}, Origin: OriginFallback, ParseError: "bad"}},
	{HintStripped, &HintStrippedData{TaskID: 2, ToolHint: "search_web", Phase: PhaseReplan, Reason: StripRule, RuleID: "r-017"}},
	{PlanUpdated, &PlanUpdatedData{Replan: 3, Trigger: TriggerNoProgress, Reason: "r", Tasks: []Task{{ID: 1, Description: "d"}}, Kept: []int64{1}, Dropped: []Task{{ID: 2, Description: "e", ToolHint: ptr("x")}}, OverCap: true, Valid: false, Error: "dup"}},
	{ToolCalled, &ToolCalledData{TaskID: ptr(int64(4)), Tool: "grep", Hint: ptr("read_file"), OK: false, ErrorKind: "exit_status", Error: "exit 1", DurationMS: 12, Control: false}},
	{TaskCompleted, &TaskCompletedData{TaskID: 4, Completion: CompletionPartialSuccess, Reported: CompletionSuccess, ToolCalls: 3, Summary: "s"}},
	{DepthLimitReached, &DepthLimitReachedData{TaskID: 4, ToolCalls: 6, Limit: 6}},
	{SessionEnded, &SessionEndedData{Outcome: OutcomeTimeout, Replans: 1, ToolCalls: 9, FailedToolCalls: 2, Iterations: 10, DurationMS: 100, Feedback: FeedbackNeutral}},
}

func TestNewRoundTrip(t *testing.T) {
	at := time.Date(2025, 6, 12, 12, 3, 8, 70123456, time.FixedZone("CEST", 2*3600))
	for _, p := range payloads {
		t.Run(string(p.typ), func(t *testing.T) {
			ev, err := New("skilllite/host-a/worker-3", "sess-1", 7, p.typ, at, p.data)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if id, err := uuid.Parse(ev.ID); err != nil || id.Version() != 7 {
				t.Errorf("New().ID = %q, want a UUIDv7", ev.ID)
			}
			if !ev.Time.Equal(at) || ev.Time.Location() != time.UTC {
				t.Errorf("New().Time = %v, want %v in UTC", ev.Time, at)
			}
			ev.Extensions = map[string]any{"traceparent": "00-ab-01", "sampled": true, "partition": json.Number("3")}
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatalf("json.Marshal() error = %v", err)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode(json.Marshal(New())) error = %v", err)
			}
			// Decode's event also keeps its typed data; New's does not.
			if got.cache == nil || ev.cache != nil {
				t.Errorf("Decode kept typed data: %v, New: %v; want Decode's only", got.cache != nil, ev.cache != nil)
			}
			plain := *got
			plain.cache = nil
			if !reflect.DeepEqual(&plain, ev) {
				t.Errorf("Decode(json.Marshal(ev)) = %+v\nwant %+v", got, ev)
			}
			var viaUnmarshal Event
			err = json.Unmarshal(b, &viaUnmarshal)
			viaUnmarshal.cache = nil
			if err != nil || !reflect.DeepEqual(&viaUnmarshal, ev) {
				t.Errorf("json.Unmarshal() = %+v, %v, want %+v", viaUnmarshal, err, ev)
			}
			payload, err := got.Payload()
			if err != nil {
				t.Fatalf("Payload() error = %v", err)
			}
			if !reflect.DeepEqual(payload, p.data) {
				t.Errorf("Payload() = %#v, want %#v", payload, p.data)
			}
		})
	}
}

func TestPayloadTypes(t *testing.T) {
	want := map[Type]reflect.Type{
		SessionStarted:    reflect.TypeFor[*SessionStartedData](),
		PlanCreated:       reflect.TypeFor[*PlanCreatedData](),
		HintStripped:      reflect.TypeFor[*HintStrippedData](),
		PlanUpdated:       reflect.TypeFor[*PlanUpdatedData](),
		ToolCalled:        reflect.TypeFor[*ToolCalledData](),
		TaskCompleted:     reflect.TypeFor[*TaskCompletedData](),
		DepthLimitReached: reflect.TypeFor[*DepthLimitReachedData](),
		SessionEnded:      reflect.TypeFor[*SessionEndedData](),
		ModelCalled:       reflect.TypeFor[*ModelCalledData](),
	}
	got := map[Type]bool{}
	for _, l := range validLines(t) {
		ev, err := Decode(l.raw)
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatalf("%s: Payload() error = %v", l.name, err)
		}
		if reflect.TypeOf(p) != want[ev.Type] {
			t.Errorf("%s: Payload() type = %T, want %v", l.name, p, want[ev.Type])
		}
		// The typed value says the same as the data.
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var fromPayload, fromData any
		if err := json.Unmarshal(b, &fromPayload); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ev.Data, &fromData); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromPayload, fromData) {
			t.Errorf("%s: Payload() = %s, want the data %s", l.name, b, ev.Data)
		}
		got[ev.Type] = true
	}
	for _, typ := range Types {
		if !got[typ] {
			t.Errorf("no %s event in testdata/events/valid", typ)
		}
	}
}

func TestPayloadErrors(t *testing.T) {
	tests := []struct {
		name   string
		ev     Event
		reason Reason
	}{
		{"unknown type", Event{Type: "agent.x", Data: json.RawMessage(`{}`)}, ReasonUnknownType},
		{"no data", Event{Type: ToolCalled}, ReasonMalformed},
		{"bad json", Event{Type: ToolCalled, Data: json.RawMessage(`{"tool":`)}, ReasonMalformed},
		{"invalid data", Event{Type: DepthLimitReached, Data: json.RawMessage(`{"task_id":1,"tool_calls":1,"limit":0}`)}, ReasonSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.ev.Payload()
			var e *Error
			if !errors.As(err, &e) || e.Reason != tt.reason {
				t.Errorf("Payload() error = %v, want reason %s", err, tt.reason)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	at := time.Date(2025, 6, 12, 10, 0, 0, 0, time.UTC)
	ok := &DepthLimitReachedData{TaskID: 1, ToolCalls: 6, Limit: 6}
	tests := []struct {
		name    string
		source  string
		session string
		seq     int64
		typ     Type
		at      time.Time
		data    any
		want    error
	}{
		{"unknown type", "skilllite/a", "s", 1, "agent.x", at, ok, ErrUnknownType},
		{"seq 0", "skilllite/a", "s", 0, DepthLimitReached, at, ok, ErrInvalid},
		{"bad source", "skill.lite/a", "s", 1, DepthLimitReached, at, ok, ErrInvalid},
		{"empty session", "skilllite/a", "", 1, DepthLimitReached, at, ok, ErrInvalid},
		{"invalid data", "skilllite/a", "s", 1, DepthLimitReached, at, &DepthLimitReachedData{TaskID: 0, Limit: 1}, ErrInvalid},
		{"data of another type", "skilllite/a", "s", 1, ToolCalled, at, ok, ErrInvalid},
		{"nil data", "skilllite/a", "s", 1, ToolCalled, at, nil, ErrInvalid},
		{"year 10000", "skilllite/a", "s", 1, DepthLimitReached, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ok, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := New(tt.source, tt.session, tt.seq, tt.typ, tt.at, tt.data)
			if err == nil {
				t.Fatalf("New() = %+v, want an error", ev)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("New() error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewNilSlices(t *testing.T) {
	at := time.Date(2025, 6, 12, 10, 0, 0, 0, time.UTC)
	for _, d := range []struct {
		typ  Type
		data any
	}{
		{SessionStarted, SessionStartedData{Agent: "a"}},
		{PlanCreated, PlanCreatedData{Origin: OriginEmpty}},
		{PlanUpdated, PlanUpdatedData{Replan: 1, Trigger: TriggerModel}},
	} {
		if _, err := New("a", "s", 1, d.typ, at, d.data); err != nil {
			t.Errorf("New(%s with nil slices) error = %v", d.typ, err)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	ev := Event{
		SpecVersion: SpecVersion, ID: "i", Source: "a/b", Type: DepthLimitReached,
		Time: time.Date(2025, 6, 12, 12, 0, 0, 500, time.FixedZone("", 7200)), Subject: "s\n\"é\x01",
		DataContentType: ContentType, Seq: 2,
		Extensions: map[string]any{"zeta": 1.5, "alpha": int64(2), "mid": "x"},
		Data:       json.RawMessage(`{"task_id":1,"tool_calls":1,"limit":1}`),
	}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"specversion":"1.0","id":"i","source":"a/b","type":"agent.depth_limit.reached","time":"2025-06-12T10:00:00.0000005Z","subject":"s\n\"é\u0001","datacontenttype":"application/json","seq":2,"alpha":2,"mid":"x","zeta":1.5,"data":{"task_id":1,"tool_calls":1,"limit":1}}`
	if string(got) != want {
		t.Errorf("json.Marshal() = %s\nwant %s", got, want)
	}
	if _, err := Decode(got); err != nil {
		t.Errorf("Decode(json.Marshal()) error = %v", err)
	}
}

func TestMarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		ext  map[string]any
		at   time.Time
	}{
		{"extension named like an attribute", map[string]any{"id": "x"}, time.Now()},
		{"extension named data", map[string]any{"data": "x"}, time.Now()},
		{"extension of a struct", map[string]any{"x": struct{}{}}, time.Now()},
		{"extension NaN", map[string]any{"x": nanFloat()}, time.Now()},
		{"extension bad json.Number", map[string]any{"x": json.Number("1x")}, time.Now()},
		{"year -1", nil, time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := Event{Type: ToolCalled, Time: tt.at, Extensions: tt.ext}
			if b, err := ev.MarshalJSON(); err == nil {
				t.Errorf("MarshalJSON() = %s, want an error", b)
			}
		})
	}
}

func nanFloat() float64 {
	zero := 0.0
	return zero / zero
}

func TestAgentOf(t *testing.T) {
	tests := []struct {
		name   string
		source string
		want   string
	}{
		{"instance", "skilllite/host-a/worker-3", "skilllite"},
		{"agent only", "coder", "coder"},
		{"two segments", "coder/ci-runner-7", "coder"},
		{"empty", "", ""},
		{"leading slash", "/x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AgentOf(tt.source); got != tt.want {
				t.Errorf("AgentOf(%q) = %q, want %q", tt.source, got, tt.want)
			}
			if got := (&Event{Source: tt.source}).Agent(); got != tt.want {
				t.Errorf("Event{Source: %q}.Agent() = %q, want %q", tt.source, got, tt.want)
			}
		})
	}
}

func TestTypes(t *testing.T) {
	tests := []struct {
		name string
		typ  Type
		want bool
	}{
		{"session started", SessionStarted, true},
		{"plan created", PlanCreated, true},
		{"hint stripped", HintStripped, true},
		{"plan updated", PlanUpdated, true},
		{"tool called", ToolCalled, true},
		{"task completed", TaskCompleted, true},
		{"depth limit", DepthLimitReached, true},
		{"session ended", SessionEnded, true},
		{"empty", "", false},
		{"wrong case", "Agent.Tool.Called", false},
		{"prefix", "agent.tool", false},
		{"suffix", "agent.tool.called.v2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.typ.Known(); got != tt.want {
				t.Errorf("Type(%q).Known() = %v, want %v", tt.typ, got, tt.want)
			}
		})
	}
	if len(Types) != 9 {
		t.Errorf("len(Types) = %d, want 9", len(Types))
	}
	for _, typ := range Types {
		if !typ.Known() {
			t.Errorf("Types has %q, which is not Known", typ)
		}
		want := "https://schema.evosignal.dev/v1/" + string(typ) + ".json"
		switch typ {
		case SessionEnded:
			want = "https://schema.evosignal.dev/v1.2/" + string(typ) + ".json"
		case ToolCalled, ModelCalled:
			want = "https://schema.evosignal.dev/v1.3/" + string(typ) + ".json"
		case SessionStarted:
			want = "https://schema.evosignal.dev/v1.4/" + string(typ) + ".json"
		}
		if got := typ.DataSchema(); got != want {
			t.Errorf("%s.DataSchema() = %q, want %q", typ, got, want)
		}
	}
}

func TestEnums(t *testing.T) {
	tests := []struct {
		name  string
		valid func(string) bool
		good  []string
	}{
		{"Origin", func(s string) bool { return Origin(s).Valid() }, []string{"model", "fallback", "empty"}},
		{"Phase", func(s string) bool { return Phase(s).Valid() }, []string{"plan", "replan"}},
		{"StripReason", func(s string) bool { return StripReason(s).Valid() }, []string{"unavailable", "rule"}},
		{"Trigger", func(s string) bool { return Trigger(s).Valid() }, []string{"model", "depth_limit", "tool_failures", "no_progress", "user"}},
		{"Completion", func(s string) bool { return Completion(s).Valid() }, []string{"success", "partial_success", "failure"}},
		{"Outcome", func(s string) bool { return Outcome(s).Valid() }, []string{"success", "partial_success", "failure", "aborted", "timeout"}},
		{"Feedback", func(s string) bool { return Feedback(s).Valid() }, []string{"pos", "neg", "neutral"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.good {
				if !tt.valid(s) {
					t.Errorf("%s(%q).Valid() = false, want true", tt.name, s)
				}
				if up := strings.ToUpper(s); tt.valid(up) {
					t.Errorf("%s(%q).Valid() = true, want false", tt.name, up)
				}
			}
			for _, s := range []string{"", "x", "partial-success"} {
				if tt.valid(s) {
					t.Errorf("%s(%q).Valid() = true, want false", tt.name, s)
				}
			}
		})
	}
}

// Has tells an optional member that is absent from one that is present and
// empty, which the typed data does not; Decode's events and others alike.
func TestHas(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		member string
		want   bool
	}{
		{"absent", `{"task_id":1,"completion":"success","tool_calls":0}`, "summary", false},
		{"empty", `{"task_id":1,"completion":"success","tool_calls":0,"summary":""}`, "summary", true},
		{"set", `{"task_id":1,"completion":"success","tool_calls":0,"summary":"s"}`, "summary", true},
		{"required", `{"task_id":1,"completion":"success","tool_calls":0}`, "task_id", true},
		{"not a member of the type", `{"task_id":1,"completion":"success","tool_calls":0}`, "tasks", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := strings.Replace(base, `"data":{"task_id":1,"tool":"grep","hint":null,"ok":true,"duration_ms":12,"control":false}`, `"data":`+tt.data, 1)
			decoded, err := Decode([]byte(strings.Replace(raw, `"agent.tool.called"`, `"agent.task.completed"`, 1)))
			if err != nil {
				t.Fatal(err)
			}
			built := Event{Type: TaskCompleted, Data: json.RawMessage(tt.data)}
			for _, e := range []*Event{decoded, &built} {
				if got := e.Has(tt.member); got != tt.want {
					t.Errorf("Has(%q) on %s = %v, want %v", tt.member, tt.data, got, tt.want)
				}
			}
		})
	}
	if (&Event{Type: TaskCompleted, Data: json.RawMessage(`{"summary":""}`)}).Has("summary") {
		t.Error("Has on data that does not pass the schema = true, want false")
	}
}

// Payload reads what Decode kept while the event's type and data are the
// ones decoded, and the data again once either was replaced.
func TestPayloadAfterChange(t *testing.T) {
	e, err := Decode([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	p1, err := e.Payload()
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := e.Payload()
	if p1 != p2 {
		t.Error("Payload() on a decoded event read its data again")
	}
	if d, ok := p1.(*ToolCalledData); !ok || d.Tool != "grep" {
		t.Fatalf("Payload() = %#v, want the tool call of base", p1)
	}
	e.Data = json.RawMessage(`{"task_id":null,"tool":"find","hint":null,"ok":true,"duration_ms":1,"control":false}`)
	if p, err := e.Payload(); err != nil || p.(*ToolCalledData).Tool != "find" {
		t.Errorf("Payload() after Data changed = %#v, %v, want the new data", p, err)
	}
	e.Type = DepthLimitReached
	e.Data = json.RawMessage(`{"task_id":1,"tool_calls":2,"limit":2}`)
	if p, err := e.Payload(); err != nil || *p.(*DepthLimitReachedData) != (DepthLimitReachedData{TaskID: 1, ToolCalls: 2, Limit: 2}) {
		t.Errorf("Payload() after Type and Data changed = %#v, %v, want the new data", p, err)
	}
	e.Type = HintStripped
	if _, err := e.Payload(); err == nil {
		t.Error("Payload() of data that does not fit the new type: no error")
	}
}
