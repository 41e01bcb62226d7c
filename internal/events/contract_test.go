package events

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/schema"
)

// These tests tie the Go types to the schema files, so that neither can
// change alone.

type schemaDoc struct {
	ID         string                     `json:"$id"`
	Required   []string                   `json:"required"`
	Properties map[string]json.RawMessage `json:"properties"`
}

func readSchema(tb testing.TB, name string) schemaDoc {
	tb.Helper()
	// The file as the latest version defines it: what Decode accepts.
	b, err := schema.FS.ReadFile(schema.Current(name))
	if err != nil {
		tb.Fatalf("read schema %s: %v", name, err)
	}
	var d schemaDoc
	if err := json.Unmarshal(b, &d); err != nil {
		tb.Fatalf("parse schema %s: %v", name, err)
	}
	return d
}

// jsonFields returns the json names of a struct's fields and which are
// required (no omitempty).
func jsonFields(typ reflect.Type) (all, required []string) {
	for f := range typ.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	slices.Sort(all)
	slices.Sort(required)
	return all, required
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestStructsMatchSchema(t *testing.T) {
	tests := []struct {
		file string
		typ  reflect.Type
	}{
		{"task.json", reflect.TypeFor[Task]()},
		{"agent.session.started.json", reflect.TypeFor[SessionStartedData]()},
		{"agent.plan.created.json", reflect.TypeFor[PlanCreatedData]()},
		{"agent.hint.stripped.json", reflect.TypeFor[HintStrippedData]()},
		{"agent.plan.updated.json", reflect.TypeFor[PlanUpdatedData]()},
		{"agent.tool.called.json", reflect.TypeFor[ToolCalledData]()},
		{"agent.task.completed.json", reflect.TypeFor[TaskCompletedData]()},
		{"agent.depth_limit.reached.json", reflect.TypeFor[DepthLimitReachedData]()},
		{"agent.session.ended.json", reflect.TypeFor[SessionEndedData]()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc := readSchema(t, tt.file)
			all, required := jsonFields(tt.typ)
			if got, want := all, keys(doc.Properties); !slices.Equal(got, want) {
				t.Errorf("%v fields = %v, want the schema's properties %v", tt.typ, got, want)
			}
			if got, want := required, sorted(doc.Required); !slices.Equal(got, want) {
				t.Errorf("%v fields without omitempty = %v, want the schema's required %v", tt.typ, got, want)
			}
		})
	}
}

func TestSpecsMatchSchema(t *testing.T) {
	check := func(t *testing.T, file string, spec *objSpec) {
		doc := readSchema(t, file)
		var names, required []string
		for _, f := range spec.fields {
			names = append(names, f.name)
			if f.required {
				required = append(required, f.name)
			}
			var prop struct {
				Enum []string `json:"enum"`
			}
			if err := json.Unmarshal(doc.Properties[f.name], &prop); err != nil {
				t.Fatal(err)
			}
			if f.kind == fEnum && !slices.Equal(f.enum, prop.Enum) {
				t.Errorf("%s: %s enum = %v, want the schema's %v", file, f.name, f.enum, prop.Enum)
			}
		}
		if got, want := sorted(names), keys(doc.Properties); !slices.Equal(got, want) {
			t.Errorf("%s: spec fields = %v, want %v", file, got, want)
		}
		if got, want := sorted(required), sorted(doc.Required); !slices.Equal(got, want) {
			t.Errorf("%s: spec required = %v, want %v", file, got, want)
		}
	}
	check(t, "task.json", &taskSpec)
	for _, typ := range Types {
		check(t, string(typ)+".json", dataSpecs[typ])
	}
}

func TestTypesMatchSchemaFiles(t *testing.T) {
	b, err := schema.FS.ReadFile(schema.Current("event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, typ := range Types {
		types = append(types, string(typ))
		if got, want := readSchema(t, string(typ)+".json").ID, typ.DataSchema(); got != want {
			t.Errorf("%s.json $id = %q, want %q", typ, got, want)
		}
	}
	if got := ev.Properties.Type.Enum; !slices.Equal(got, types) {
		t.Errorf("event.json type enum = %v, want Types %v", got, types)
	}
	if got := len(dataSpecs); got != len(Types) {
		t.Errorf("len(dataSpecs) = %d, want %d", got, len(Types))
	}
}

func TestEnvelopeMatchesSchema(t *testing.T) {
	doc := readSchema(t, "cloudevent.json")
	attrs := []string{attrSpecVersion, attrID, attrSource, attrType, attrTime, attrSubject, attrDataContentType, attrSeq, attrDataSchema, attrData}
	if got, want := sorted(attrs), keys(doc.Properties); !slices.Equal(got, want) {
		t.Errorf("envelope attributes = %v, want %v", got, want)
	}
	if got, want := sorted(required[:]), sorted(doc.Required); !slices.Equal(got, want) {
		t.Errorf("required attributes = %v, want %v", got, want)
	}
	tags, _ := jsonFields(reflect.TypeFor[Event]())
	if !slices.Equal(tags, keys(doc.Properties)) {
		t.Errorf("Event json tags = %v, want %v", tags, keys(doc.Properties))
	}
}
