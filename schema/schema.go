// Package schema holds the evosignal wire contract as JSON Schema (draft
// 2020-12) files and compiles them.
//
// Each version is a directory: v1/ holds the whole v1 contract, and each
// minor version after it (v1.1/, …) holds only the files it changes plus an
// event.json that $refs the files it keeps from the versions before. A
// published file never changes; see README.md ("Versioning") for what a
// minor version may add, and for the human description of the contract.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files, named <version>/<name>.json (v1/event.json,
// v1.1/agent.session.ended.json, …).
//
//go:embed v1/*.json v1.1/*.json v1.2/*.json v1.3/*.json v1.4/*.json
var FS embed.FS

// Versions lists the contract's versions, oldest first: the directories of
// FS. Each one's events are events of every version after it.
var Versions = []string{"v1", "v1.1", "v1.2", "v1.3", "v1.4"}

// Latest is the newest version: the contract the ingester accepts.
var Latest = Versions[len(Versions)-1]

// Base is the URL prefix of every schema $id: a file's $id is Base and its
// name in FS. It is an identifier only; nothing is ever fetched from it.
const Base = "https://schema.evosignal.dev/"

// BaseV1 … BaseV1_4 are the URL prefixes of the v1, v1.1, v1.2, v1.3 and
// v1.4 $ids.
const (
	BaseV1   = Base + "v1/"
	BaseV1_1 = Base + "v1.1/"
	BaseV1_2 = Base + "v1.2/"
	BaseV1_3 = Base + "v1.3/"
	BaseV1_4 = Base + "v1.4/"
)

// EventV1 … EventV1_4 are the $ids of the schema of a whole v1, v1.1, v1.2,
// v1.3 and v1.4 event.
const (
	EventV1   = BaseV1 + "event.json"
	EventV1_1 = BaseV1_1 + "event.json"
	EventV1_2 = BaseV1_2 + "event.json"
	EventV1_3 = BaseV1_3 + "event.json"
	EventV1_4 = BaseV1_4 + "event.json"
)

// Event is the $id of the schema of a whole event of the Latest version:
// what the ingester accepts.
const Event = EventV1_4

// RuleSetV1 is the $id of the v1 schema of the learned-rules document;
// RuleSet that of the latest (v1.4: with holdout), which
// agent/ruleset.RuleSet writes.
const (
	RuleSetV1 = BaseV1 + "ruleset.json"
	RuleSet   = BaseV1_4 + "ruleset.json"
)

// CompileV1 compiles v1/event.json, the schema of a v1 event:
// Compile(EventV1). Every v1 event is an event of the Latest version too;
// CompileEvent is what evosignal accepts.
//
// The compiled schema validates a value as returned by
// jsonschema.UnmarshalJSON. It cannot see what JSON parsing hides (duplicate
// member names, invalid UTF-8, lone surrogate escapes); the evosignal
// decoder rejects those as malformed before any schema check.
func CompileV1() (*jsonschema.Schema, error) { return Compile(EventV1) }

// CompileEvent compiles the schema of an event of the Latest version,
// Compile(Event): the contract the ingester, validate and the Go decoder
// (internal/events) hold events to. Like CompileV1 it cannot see what JSON
// parsing hides.
func CompileEvent() (*jsonschema.Schema, error) { return Compile(Event) }

// Compile compiles the schema with $id id (EventV1, Event, RuleSetV1: Base
// and a file's name in FS) with format assertions on (so "time" must be an
// RFC 3339 date-time). Every $ref is resolved from FS; a reference to
// anything else is an error, never a network fetch.
func Compile(id string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	for _, v := range Versions {
		files, err := fs.Glob(FS, v+"/*.json")
		if err != nil {
			return nil, fmt.Errorf("list schema files of %s: %w", v, err)
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
			if err := c.AddResource(Base+name, doc); err != nil {
				return nil, fmt.Errorf("add %s: %w", name, err)
			}
		}
	}
	sch, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", id, err)
	}
	return sch, nil
}

// Current returns the name in FS of the file name (e.g.
// "agent.session.ended.json") as the Latest version defines it: the file of
// that name in the newest version that has one. It returns "" when no
// version has it.
func Current(name string) string {
	for i := len(Versions) - 1; i >= 0; i-- {
		p := path.Join(Versions[i], name)
		if _, err := fs.Stat(FS, p); err == nil {
			return p
		}
	}
	return ""
}

// noLoader refuses every URL: all resources are added up front from FS.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not embedded (refusing to fetch)", url)
}
