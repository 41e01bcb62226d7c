// Package queries holds every SQL statement evosignal runs, as .sql files
// embedded into the binaries. A researcher can run the same files in any
// DuckDB client against a database the ingester wrote.
//
//   - migrations/NNNN_name.sql create and evolve the schema; they are applied
//     in order and recorded in schema_migrations.
//   - derive/*.sql fill the typed tables from the rows of batch_events, a view
//     or table with the columns of events: the ingester runs them on each
//     batch it commits, and a rebuild runs them over the whole events table.
//   - include/*.sql and analyze/mappings_task_types.sql are fragments, not
//     statements: a file that needs one has a line "-- @include PATH" (PATH
//     from this directory) in its place, and Expand puts the fragment there.
//     To run such a file by hand, paste the fragment over the line.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql derive/*.sql ingest/*.sql analyze/*.sql report/*.sql export/*.sql include/*.sql
var FS embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations ordered by version. File names
// must look like 0001_init.sql; a malformed name or a repeated version is an
// error, so a bad file cannot be skipped silently.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(FS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	out := make([]Migration, 0, len(names))
	seen := map[int]string{}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", n)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s: version %d already used by %s", n, v, prev)
		}
		seen[v] = n
		b, err := FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Derive returns the statements that fill the typed tables from batch_events,
// in file-name order, keyed by file name.
func Derive() ([]Named, error) { return dir("derive") }

// Named is one embedded statement and the file it came from.
type Named struct {
	File string
	SQL  string
}

func dir(d string) ([]Named, error) {
	names, err := fs.Glob(FS, d+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Named, 0, len(names))
	for _, n := range names {
		b, err := FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Named{File: n, SQL: string(b)})
	}
	return out, nil
}

// MustRead returns the embedded file name (e.g. "ingest/save_position.sql").
// It panics on a missing file: names are constants checked by tests.
func MustRead(name string) string {
	b, err := FS.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("queries: %v", err))
	}
	return string(b)
}

// includeMark starts a line that Expand replaces with the named file.
const includeMark = "-- @include "

// Expand returns the embedded file name with every "-- @include PATH" line
// replaced by the (expanded) file PATH. A missing file or an include cycle
// is an error.
func Expand(name string) (string, error) { return expand(name, nil) }

func expand(name string, stack []string) (string, error) {
	if slices.Contains(stack, name) {
		return "", fmt.Errorf("queries: include cycle %s → %s", strings.Join(stack, " → "), name)
	}
	b, err := FS.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("queries: %w", err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		inc, ok := strings.CutPrefix(strings.TrimSpace(l), includeMark)
		if !ok {
			continue
		}
		frag, err := expand(strings.TrimSpace(inc), append(stack, name))
		if err != nil {
			return "", err
		}
		lines[i] = strings.TrimSuffix(frag, "\n") + "\n"
	}
	return strings.Join(lines, ""), nil
}

// MustExpand is Expand for the constant names of the binaries' own queries
// (checked by tests); it panics on an error.
func MustExpand(name string) string {
	s, err := Expand(name)
	if err != nil {
		panic(err.Error())
	}
	return s
}
