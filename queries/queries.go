// Package queries holds every SQL statement evosignal runs, as .sql files
// embedded into the binaries. A researcher can run the same files in any
// DuckDB client against a database the ingester wrote.
//
//   - migrations/NNNN_name.sql create and alter tables; they are applied in
//     order, recorded in schema_migrations with the checksum of their text,
//     and never edited once committed (the store refuses a database whose
//     recorded checksum no longer matches). migrate/*.sql are the
//     migrator's own statements.
//   - views/*.sql define the views (analysis facts, session signals): each
//     a CREATE OR REPLACE VIEW, all applied on every writable open, after
//     the migrations and in the order of Views (each after the views it
//     names, found in its text: no list to keep), so a fix to a definition
//     reaches every database. Some migrations created views too (0001-0003,
//     before views/ existed): views/ holds their current definitions.
//   - derive/*.sql fill the typed tables from the rows of batch_events, a view
//     or table with the columns of events: a rebuild runs them over the whole
//     events table. They are the reference: the ingester writes the same
//     rows from the events it decoded (internal/store/typed.go), and a test
//     holds the two equal.
//   - export/table.sql.tmpl is the export query of every table an export
//     writes: a Go text/template, which internal/export fills with each
//     table's name and parts from its list of tables (tables.go).
//   - web/*.sql are the display-only lookups of the live pages
//     (internal/web): one session's plans, tool calls and events, a page
//     of the session list. They count nothing: every figure the pages
//     show comes from analyze/ through internal/metrics.
//   - include/*.sql, web/list_*.sql and analyze/mappings_task_types.sql are fragments, not
//     statements: a file that needs one has a line "-- @include PATH" (PATH
//     from this directory) in its place, and Expand puts the fragment there.
//     To run such a file by hand, paste the fragment over the line.
package queries

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql migrate/*.sql views/*.sql derive/*.sql ingest/*.sql analyze/*.sql report/*.sql export/*.sql export/*.tmpl include/*.sql web/*.sql
var FS embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version  int
	Name     string
	File     string // e.g. migrations/0001_init.sql
	SQL      string
	Checksum string // hex sha256 of SQL, as schema_migrations records it
}

// Checksum is the checksum of a migration's text: its hex sha256.
func Checksum(sql string) string {
	sum := sha256.Sum256([]byte(sql))
	return hex.EncodeToString(sum[:])
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
		out = append(out, Migration{Version: v, Name: name, File: n, SQL: string(b), Checksum: Checksum(string(b))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Views returns the view definitions of views/ (includes expanded) in the
// order they are to be created: each after the views it reads (viewReads),
// views that do not depend on each other by name. A cycle is an error.
func Views() ([]Named, error) {
	all, err := dir("views")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, n := range all {
		names[i] = viewName(n.File)
	}
	reads := make(map[string][]string, len(all))
	for i, n := range all {
		reads[names[i]] = viewReads(n.SQL, names[i], names)
	}
	order, err := viewOrder(names, reads)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Named, len(all))
	for i, n := range all {
		byName[names[i]] = n
	}
	out := make([]Named, len(order))
	for i, v := range order {
		out[i] = byName[v]
	}
	return out, nil
}

// viewName is the name of the view a file of views/ defines: its base name.
func viewName(file string) string { return strings.TrimSuffix(path.Base(file), ".sql") }

// viewReads returns the views of names (other than self) that the
// statement sql reads: those named by a word of it outside comments and
// string literals, in the order of names. A word right after AS names
// something new (an alias, a CAST's type), not a view it reads. A column
// or CTE that shares a view's name counts, which can only order the views
// more strictly than needed (or make a cycle, which Views reports), never
// less.
func viewReads(sql, self string, names []string) []string {
	words := map[string]bool{}
	prev := ""
	for _, w := range sqlWords(sql) {
		if !strings.EqualFold(prev, "AS") {
			words[strings.ToLower(w)] = true
		}
		prev = w
	}
	var out []string
	for _, n := range names {
		if n != self && words[n] {
			out = append(out, n)
		}
	}
	return out
}

// sqlWords splits sql into its words (runs of letters, digits and _), leaving
// out -- comments, /* */ comments and '…' string literals; "…" identifiers
// are words.
func sqlWords(sql string) []string {
	var out []string
	word := func(r byte) bool {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for i := 0; i < len(sql); {
		switch {
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case strings.HasPrefix(sql[i:], "/*"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += 2 + j + 2
		case sql[i] == '\'':
			j := strings.IndexByte(sql[i+1:], '\'') // '' inside is two literals: no word either way
			if j < 0 {
				return out
			}
			i += 1 + j + 1
		case word(sql[i]):
			j := i
			for j < len(sql) && word(sql[j]) {
				j++
			}
			out = append(out, sql[i:j])
			i = j
		default:
			i++
		}
	}
	return out
}

// viewOrder sorts names so that each comes after the names it reads
// (reads[name]); of the names ready at a step, the first by name comes
// first, so the order is the same on every run. A cycle is an error.
func viewOrder(names []string, reads map[string][]string) ([]string, error) {
	waiting := make(map[string]int, len(names)) // views it reads not yet placed
	readers := map[string][]string{}
	for _, n := range names {
		waiting[n] = len(reads[n])
		for _, r := range reads[n] {
			readers[r] = append(readers[r], n)
		}
	}
	var ready, out []string
	for _, n := range names {
		if waiting[n] == 0 {
			ready = append(ready, n)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		n := ready[0]
		ready = ready[1:]
		out = append(out, n)
		for _, r := range readers[n] {
			if waiting[r]--; waiting[r] == 0 {
				ready = append(ready, r)
			}
		}
	}
	if len(out) < len(names) {
		var cycle []string
		for _, n := range names {
			if waiting[n] > 0 {
				cycle = append(cycle, fmt.Sprintf("%s (reads %s)", n, strings.Join(reads[n], ", ")))
			}
		}
		return nil, fmt.Errorf("queries: views read each other in a cycle: %s", strings.Join(cycle, "; "))
	}
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

// dir returns the statements of directory d, in file-name order, each with
// its includes expanded (see Expand).
func dir(d string) ([]Named, error) {
	names, err := fs.Glob(FS, d+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Named, 0, len(names))
	for _, n := range names {
		sql, err := Expand(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Named{File: n, SQL: sql})
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

// includeMark starts a line that Expand replaces with the named file. This
// file is the only place that reads it: other packages ask Includes,
// Fragments or Expand.
const includeMark = "-- @include "

// includeOf returns the path a line includes, if it is an include line.
func includeOf(line string) (string, bool) {
	inc, ok := strings.CutPrefix(strings.TrimSpace(line), includeMark)
	return strings.TrimSpace(inc), ok
}

// Includes returns the paths the embedded file name includes directly, in
// order of appearance.
func Includes(name string) ([]string, error) {
	b, err := FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if inc, ok := includeOf(l); ok {
			out = append(out, inc)
		}
	}
	return out, nil
}

// Fragments returns the embedded files that another embedded file
// includes: pieces of statements, not statements of their own.
func Fragments() (map[string]bool, error) {
	out := map[string]bool{}
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".sql" {
			return err
		}
		incs, err := Includes(p)
		for _, inc := range incs {
			out[inc] = true
		}
		return err
	})
	return out, err
}

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
		inc, ok := includeOf(l)
		if !ok {
			continue
		}
		frag, err := expand(inc, append(stack, name))
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
