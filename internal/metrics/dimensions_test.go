package metrics

import (
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/queries"
)

// byFragment is the SQL of the -by grouping: one column per dimension.
const byFragment = "include/by_dimensions.sql"

// byQueries are the analysis queries that group by every dimension of
// $by, through byFragment.
var byQueries = []string{"analyze/replans.sql", "analyze/trend.sql", "analyze/effect.sql", "analyze/hints.sql", "analyze/mappings.sql"}

var (
	byLine = regexp.MustCompile(`^CASE WHEN list_contains\(\$by, '([a-z_]+)'\)\s+THEN .+ END\s+AS ([a-z_]+),?$`)
	byUse  = regexp.MustCompile(`list_contains\(\$by, '([a-z_]+)'\)`)
)

// byFragmentDims returns the dimensions the statement lines of sql select,
// in order, as byFragment writes them: CASE WHEN list_contains($by, 'D')
// THEN … END AS D. A line of another form, or a dimension selected under
// another name, is an error.
func byFragmentDims(tb testing.TB, sql string) []string {
	tb.Helper()
	var dims []string
	for _, l := range strings.Split(sql, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--") {
			continue
		}
		m := byLine.FindStringSubmatch(l)
		switch {
		case m == nil:
			tb.Errorf("%s: line %q is not CASE WHEN list_contains($by, 'D') THEN … END AS D", byFragment, l)
		case m[1] != m[2]:
			tb.Errorf("%s: dimension %s is selected as %s", byFragment, m[1], m[2])
		default:
			dims = append(dims, m[1])
		}
	}
	return dims
}

// The -by dimensions are one list: the SQL fragment selects exactly
// Dimensions, in order; every query that groups by them includes it; and
// no other query names a dimension Dimensions does not have.
func TestDimensionsMatchTheSQL(t *testing.T) {
	if got := byFragmentDims(t, queries.MustRead(byFragment)); !slices.Equal(got, Dimensions) {
		t.Errorf("%s selects the dimensions %v; metrics.Dimensions is %v", byFragment, got, Dimensions)
	}
	for _, name := range byQueries {
		incs, err := queries.Includes(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(incs, byFragment) {
			t.Errorf("%s does not include %s (it includes %v)", name, byFragment, incs)
		}
		if own := byUse.FindAllString(queries.MustRead(name), -1); len(own) > 0 {
			t.Errorf("%s groups by its own %v besides %s", name, own, byFragment)
		}
	}
	err := fs.WalkDir(queries.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sql") || p == byFragment {
			return err
		}
		for _, m := range byUse.FindAllStringSubmatch(queries.MustRead(p), -1) {
			if !slices.Contains(Dimensions, m[1]) {
				t.Errorf("%s groups by %q, which is not among metrics.Dimensions %v", p, m[1], Dimensions)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The check above fails when the fragment and Dimensions disagree.
func TestByFragmentDims(t *testing.T) {
	tests := []struct {
		name    string
		sql     string
		want    []string
		wantBad bool
	}{
		{"two", "-- header\nCASE WHEN list_contains($by, 'agent') THEN agent END AS agent,\n" +
			"CASE WHEN list_contains($by, 'day')   THEN CAST(day AS VARCHAR) END AS day\n", []string{"agent", "day"}, false},
		{"renamed", "CASE WHEN list_contains($by, 'agent') THEN agent END AS who\n", nil, true},
		{"another form", "agent,\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			got := byFragmentDims(rec, tt.sql)
			if !slices.Equal(got, tt.want) || rec.failed != tt.wantBad {
				t.Fatalf("byFragmentDims(%q) = %v, failed %v; want %v, failed %v", tt.sql, got, rec.failed, tt.want, tt.wantBad)
			}
		})
	}
}

// recorder is a testing.TB that notes an error instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

// Group has one field per dimension, in the order of Dimensions, named in
// JSON as the query columns it is read from.
func TestGroupHasTheDimensions(t *testing.T) {
	var got []string
	g := reflect.TypeFor[Group]()
	for i := range g.NumField() {
		name, _, _ := strings.Cut(g.Field(i).Tag.Get("json"), ",")
		got = append(got, name)
	}
	if !slices.Equal(got, Dimensions) {
		t.Errorf("Group's fields are %v; metrics.Dimensions is %v", got, Dimensions)
	}
}
