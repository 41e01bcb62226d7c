package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const testdata = "../testdata/events"

func compile(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	sch, err := CompileV1()
	if err != nil {
		tb.Fatalf("CompileV1() error = %v", err)
	}
	return sch
}

// events are the event schemas of every version, by $id.
func eventSchemas(tb testing.TB) map[string]*jsonschema.Schema {
	tb.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, v := range Versions {
		id := Base + v + "/event.json"
		sch, err := Compile(id)
		if err != nil {
			tb.Fatalf("Compile(%q) error = %v", id, err)
		}
		out[id] = sch
	}
	if _, err := CompileEvent(); err != nil {
		tb.Fatalf("CompileEvent() error = %v", err)
	}
	return out
}

func validate(tb testing.TB, sch *jsonschema.Schema, raw []byte) error {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

func TestFiles(t *testing.T) {
	for i, v := range Versions {
		files, err := fs.Glob(FS, v+"/*.json")
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no schema files: %v", v, err)
		}
		var dataRefs []string
		for _, name := range files {
			b, err := FS.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Schema string `json:"$schema"`
				ID     string `json:"$id"`
				AllOf  []struct {
					Then struct {
						Properties struct {
							Data struct {
								Ref string `json:"$ref"`
							} `json:"data"`
						} `json:"properties"`
					} `json:"then"`
				} `json:"allOf"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, want := doc.Schema, "https://json-schema.org/draft/2020-12/schema"; got != want {
				t.Errorf("%s: $schema = %q, want %q", name, got, want)
			}
			if got, want := doc.ID, Base+name; got != want {
				t.Errorf("%s: $id = %q, want %q", name, got, want)
			}
			for _, a := range doc.AllOf {
				dataRefs = append(dataRefs, path.Join(v, a.Then.Properties.Data.Ref))
			}
		}
		if i > 0 && !slices.Contains(files, v+"/event.json") {
			t.Errorf("%s has no event.json", v)
		}
		// event.json refers to every per-type file, each in the newest
		// version up to v that has one.
		var want []string
		for _, name := range typeFiles(t, Versions[:i+1]) {
			want = append(want, newestUpTo(Versions[:i+1], name))
		}
		slices.Sort(dataRefs)
		slices.Sort(want)
		if !slices.Equal(dataRefs, want) {
			t.Errorf("%s/event.json data refs = %v, want %v", v, dataRefs, want)
		}
	}
}

// typeFiles are the names of v1's per-type files (a minor version adds no
// type).
// typeFiles lists the names of the per-type data files of versions (each
// name once): the v1 types and those a minor version added.
func typeFiles(tb testing.TB, versions []string) []string {
	tb.Helper()
	var out []string
	for _, v := range versions {
		files, err := fs.Glob(FS, v+"/agent.*.json")
		if err != nil || (v == "v1" && len(files) == 0) {
			tb.Fatalf("no %s type files: %v", v, err)
		}
		for _, f := range files {
			if !slices.Contains(out, path.Base(f)) {
				out = append(out, path.Base(f))
			}
		}
	}
	return out
}

// newestUpTo is the name in FS of name in the newest of versions that has
// it.
func newestUpTo(versions []string, name string) string {
	for i := len(versions) - 1; i >= 0; i-- {
		if _, err := fs.Stat(FS, path.Join(versions[i], name)); err == nil {
			return path.Join(versions[i], name)
		}
	}
	return ""
}

func TestCurrent(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"event.json", Latest + "/event.json"},
		{"agent.session.ended.json", "v1.2/agent.session.ended.json"},
		{"agent.plan.created.json", "v1/agent.plan.created.json"},
		{"task.json", "v1/task.json"},
		{"nope.json", ""},
	}
	for _, tt := range tests {
		if got := Current(tt.name); got != tt.want {
			t.Errorf("Current(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got, want := Event, Base+Current("event.json"); got != want {
		t.Errorf("Event = %q, want %q", got, want)
	}
}

// TestMinorVersionsAreAdditive holds every file of a minor version to the
// rule of README.md ("Versioning") against the file it replaces: the same
// required members and additionalProperties, every old member kept as it
// was (descriptions aside) except that an enum may gain values, and new
// members optional. A file no earlier version has must be the data of a
// type the version adds: one its event.json lists and the version before's
// does not.
func TestMinorVersionsAreAdditive(t *testing.T) {
	type doc struct {
		Required             []string                   `json:"required"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	read := func(name string) doc {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return d
	}
	// member parses a property's schema without its description and enum.
	member := func(raw json.RawMessage) (rest map[string]json.RawMessage, enum []string) {
		if err := json.Unmarshal(raw, &rest); err != nil {
			t.Fatal(err)
		}
		if e, ok := rest["enum"]; ok {
			if err := json.Unmarshal(e, &enum); err != nil {
				t.Fatal(err)
			}
		}
		delete(rest, "description")
		delete(rest, "enum")
		return rest, enum
	}
	for i := 1; i < len(Versions); i++ {
		files, err := fs.Glob(FS, Versions[i]+"/*.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			base := path.Base(name)
			if base == "event.json" {
				continue
			}
			prev := newestUpTo(Versions[:i], base)
			if prev == "" {
				typ := strings.TrimSuffix(base, ".json")
				if !strings.HasPrefix(base, "agent.") || !slices.Contains(types(Versions[i]), typ) || slices.Contains(types(Versions[i-1]), typ) {
					t.Errorf("%s: no earlier version has %s, and it is not the data of a type %s adds", name, base, Versions[i])
				}
				continue
			}
			old, cur := read(prev), read(name)
			if !slices.Equal(sorted(old.Required), sorted(cur.Required)) {
				t.Errorf("%s: required = %v, want %s's %v", name, cur.Required, prev, old.Required)
			}
			if string(old.AdditionalProperties) != string(cur.AdditionalProperties) {
				t.Errorf("%s: additionalProperties = %s, want %s's %s", name, cur.AdditionalProperties, prev, old.AdditionalProperties)
			}
			for m, raw := range old.Properties {
				craw, ok := cur.Properties[m]
				if !ok {
					t.Errorf("%s: member %s of %s is gone", name, m, prev)
					continue
				}
				oRest, oEnum := member(raw)
				cRest, cEnum := member(craw)
				if !reflect.DeepEqual(oRest, cRest) {
					t.Errorf("%s: member %s changed from %s", name, m, prev)
				}
				for _, e := range oEnum {
					if !slices.Contains(cEnum, e) {
						t.Errorf("%s: member %s lost enum value %q of %s", name, m, e, prev)
					}
				}
				if oEnum != nil && !slices.Equal(oEnum, cEnum[:min(len(oEnum), len(cEnum))]) {
					t.Errorf("%s: member %s enum %v does not start with %s's %v", name, m, cEnum, prev, oEnum)
				}
			}
		}
	}
}

// types lists the event types of version v: its event.json's type enum.
func types(v string) []string {
	b, err := FS.ReadFile(v + "/event.json")
	if err != nil {
		return nil
	}
	var doc struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	return doc.Properties.Type.Enum
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestCompileV1(t *testing.T) {
	sch := compile(t)
	ok := []byte(`{"specversion":"1.0","id":"a","source":"coder","type":"agent.depth_limit.reached","time":"2025-06-12T10:00:00Z","subject":"s","datacontenttype":"application/json","seq":1,"data":{"task_id":1,"tool_calls":6,"limit":6}}`)
	if err := validate(t, sch, ok); err != nil {
		t.Errorf("Validate() error = %v", err)
	}
	// Format assertion is on.
	bad := bytes.Replace(ok, []byte("2025-06-12T10:00:00Z"), []byte("2025-06-12"), 1)
	if err := validate(t, sch, bad); err == nil {
		t.Errorf("Validate() accepts time %q", "2025-06-12")
	}
}

func TestNoFetch(t *testing.T) {
	if _, err := (noLoader{}).Load("https://schema.evosignal.dev/v1/other.json"); err == nil {
		t.Error("noLoader.Load() error = nil, want an error")
	}
}

// newerSamples are the sample sessions written against a minor version
// (what it adds is in them), by file; every other sample is v1.
var newerSamples = map[string]string{"coder_model_calls.jsonl": "v1.4", "coder_rules_applied.jsonl": "v1.4"}

// TestValidTestdata checks that every sample is an event of its version and
// of every version after it: a minor version keeps old events valid.
func TestValidTestdata(t *testing.T) {
	schemas := eventSchemas(t)
	files, err := filepath.Glob(filepath.Join(testdata, "valid", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid test data: %v", err)
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		from := "v1"
		if v, ok := newerSamples[filepath.Base(file)]; ok {
			from = v
		}
		for n := 1; sc.Scan(); n++ {
			for _, v := range Versions[slices.Index(Versions, from):] {
				id := Base + v + "/event.json"
				if err := validate(t, schemas[id], sc.Bytes()); err != nil {
					t.Errorf("%s:%d: %s: %v", filepath.Base(file), n, id, err)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestInvalidTestdata checks the cases the schema decides alone. The
// malformed_json cases (bad JSON, or JSON that is not I-JSON) are checked
// against the schema and the decoder in internal/events.
func TestInvalidTestdata(t *testing.T) {
	schemas := eventSchemas(t)
	files, err := filepath.Glob(filepath.Join(testdata, "invalid", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid test data: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		if strings.HasPrefix(name, "malformed_json__") {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for id, sch := range schemas {
			if err := validate(t, sch, raw); err == nil {
				t.Errorf("%s: %s: Validate() error = nil, want a violation", name, id)
			}
		}
	}
}

// TestV1_1 checks what v1.1 adds: outcome "unknown", which v1 rejects.
func TestV1_1(t *testing.T) {
	schemas := eventSchemas(t)
	v1, v11 := schemas[EventV1], schemas[EventV1_1]
	ended := func(outcome string) []byte {
		return []byte(`{"specversion":"1.0","id":"a","source":"coder","type":"agent.session.ended","time":"2025-06-12T10:00:00Z","subject":"s","datacontenttype":"application/json","seq":2,` +
			`"data":{"outcome":"` + outcome + `","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":1,"duration_ms":5}}`)
	}
	tests := []struct {
		name     string
		raw      []byte
		v1, v1_1 bool // valid under v1, v1.1
	}{
		{"outcome success", ended("success"), true, true},
		{"outcome unknown", ended("unknown"), false, true},
		{"outcome cancelled", ended("cancelled"), false, false},
		{"outcome Unknown", ended("Unknown"), false, false},
	}
	for _, tt := range tests {
		if got := validate(t, v1, tt.raw) == nil; got != tt.v1 {
			t.Errorf("%s: valid v1 = %v, want %v", tt.name, got, tt.v1)
		}
		if got := validate(t, v11, tt.raw) == nil; got != tt.v1_1 {
			t.Errorf("%s: valid v1.1 = %v, want %v", tt.name, got, tt.v1_1)
		}
	}
}

// TestV1_2 checks what v1.2 adds: agent.session.ended usage, which v1.1
// rejects; its counts are whole and non-negative, model_calls and model_ms
// required, nothing else allowed in it.
func TestV1_2(t *testing.T) {
	schemas := eventSchemas(t)
	v11, v12 := schemas[EventV1_1], schemas[EventV1_2]
	ended := func(usage string) []byte {
		u := ""
		if usage != "" {
			u = `,"usage":` + usage
		}
		return []byte(`{"specversion":"1.0","id":"a","source":"coder","type":"agent.session.ended","time":"2025-06-12T10:00:00Z","subject":"s","datacontenttype":"application/json","seq":2,` +
			`"data":{"outcome":"unknown","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":3,"duration_ms":5` + u + `}}`)
	}
	tests := []struct {
		name       string
		raw        []byte
		v1_1, v1_2 bool
	}{
		{"no usage", ended(""), true, true},
		{"usage", ended(`{"model_calls":3,"input_tokens":1200,"output_tokens":80,"cached_input_tokens":1000,"model_ms":900}`), false, true},
		{"usage without tokens", ended(`{"model_calls":3,"model_ms":900}`), false, true},
		{"usage without model_calls", ended(`{"input_tokens":1,"model_ms":9}`), false, false},
		{"negative tokens", ended(`{"model_calls":1,"input_tokens":-1,"model_ms":9}`), false, false},
		{"fractional tokens", ended(`{"model_calls":1,"output_tokens":1.5,"model_ms":9}`), false, false},
		{"unknown member", ended(`{"model_calls":1,"model_ms":9,"cost_usd":0.1}`), false, false},
	}
	for _, tt := range tests {
		if got := validate(t, v11, tt.raw) == nil; got != tt.v1_1 {
			t.Errorf("%s: valid v1.1 = %v, want %v", tt.name, got, tt.v1_1)
		}
		if got := validate(t, v12, tt.raw) == nil; got != tt.v1_2 {
			t.Errorf("%s: valid v1.2 = %v, want %v", tt.name, got, tt.v1_2)
		}
	}
}
