// Package schema holds the evosignal wire contract as JSON Schema (draft
// 2020-12) files and compiles them.
//
// The files under v1/ are the source of truth for what an evosignal v1 event
// is; see README.md for the human description. A published file never
// changes: a breaking change gets a new event type name or a new v2/
// directory beside v1/.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the v1 schema files, named v1/<name>.json.
//
//go:embed v1/*.json
var FS embed.FS

// BaseV1 is the URL prefix of the v1 schema $ids. It is an identifier only;
// nothing is ever fetched from it.
const BaseV1 = "https://schema.evosignal.dev/v1/"

// EventV1 is the $id of the schema of a whole v1 event.
const EventV1 = BaseV1 + "event.json"

// RuleSetV1 is the $id of the schema of the learned-rules document
// (agent/ruleset.RuleSet).
const RuleSetV1 = BaseV1 + "ruleset.json"

// CompileV1 compiles v1/event.json, the schema of an event: Compile(EventV1).
//
// The compiled schema validates a value as returned by
// jsonschema.UnmarshalJSON. It cannot see what JSON parsing hides (duplicate
// member names, invalid UTF-8, lone surrogate escapes); the evosignal
// decoder rejects those as malformed before any schema check.
func CompileV1() (*jsonschema.Schema, error) { return Compile(EventV1) }

// Compile compiles the v1 schema with $id id (EventV1, RuleSetV1: BaseV1
// and a file's name under v1/) with format assertions on (so "time" must be
// an RFC 3339 date-time). Every $ref is resolved from FS; a reference to
// anything else is an error, never a network fetch.
func Compile(id string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	files, err := fs.Glob(FS, "v1/*.json")
	if err != nil {
		return nil, fmt.Errorf("list schema files: %w", err)
	}
	for _, name := range files {
		b, err := FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if err := c.AddResource(BaseV1+path.Base(name), doc); err != nil {
			return nil, fmt.Errorf("add %s: %w", name, err)
		}
	}
	sch, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", id, err)
	}
	return sch, nil
}

// noLoader refuses every URL: all resources are added up front from FS.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not embedded (refusing to fetch)", url)
}
