package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
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

func validate(tb testing.TB, sch *jsonschema.Schema, raw []byte) error {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

func TestFiles(t *testing.T) {
	files, err := fs.Glob(FS, "v1/*.json")
	if err != nil {
		t.Fatal(err)
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
		if got, want := doc.ID, BaseV1+filepath.Base(name); got != want {
			t.Errorf("%s: $id = %q, want %q", name, got, want)
		}
		for _, a := range doc.AllOf {
			dataRefs = append(dataRefs, a.Then.Properties.Data.Ref)
		}
	}
	// event.json refers to every per-type file.
	var typeFiles []string
	for _, name := range files {
		if base := filepath.Base(name); strings.HasPrefix(base, "agent.") {
			typeFiles = append(typeFiles, base)
		}
	}
	slices.Sort(dataRefs)
	if !slices.Equal(dataRefs, typeFiles) {
		t.Errorf("event.json data refs = %v, want %v", dataRefs, typeFiles)
	}
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

func TestValidTestdata(t *testing.T) {
	sch := compile(t)
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
		for n := 1; sc.Scan(); n++ {
			if err := validate(t, sch, sc.Bytes()); err != nil {
				t.Errorf("%s:%d: %v", filepath.Base(file), n, err)
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
	sch := compile(t)
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
		if err := validate(t, sch, raw); err == nil {
			t.Errorf("%s: Validate() error = nil, want a violation", name)
		}
	}
}
