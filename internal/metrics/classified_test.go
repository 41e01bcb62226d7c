package metrics

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/taxonomytest"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// otherTaxonomy classifies differently from the default one.
func otherTaxonomy(tb testing.TB) *taxonomy.Taxonomy {
	tb.Helper()
	tax, err := taxonomy.Parse([]byte(`{"name": "other", "version": "1", "fallback": "misc",
		"types": [{"type": "keys", "keywords": ["key", "sign"]}, {"type": "tests", "keywords": ["test"]}]}`))
	if err != nil {
		tb.Fatal(err)
	}
	return tax
}

// Analyses give the same results whether the ingester classified the stored
// facts with the analysis's taxonomy (used), with another (ignored) or not
// at all (classified on the fly), whatever taxonomy the analysis uses.
func TestStoredClassificationGivesTheSameResults(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, fixture := range []string{"hints_edge.jsonl", "rules_swaps.jsonl", "effect_rules.jsonl", "trend_days.jsonl"} {
		input := analyzeFixture(t, fixture)
		stores := map[string]Source{
			"default": ingestedDBWith(t, taxonomy.Default(), nil, input),
			"other":   ingestedDBWith(t, otherTaxonomy(t), nil, input),
			"none":    ingestedDBWith(t, nil, nil, input),
		}
		for name, src := range stores {
			var n int64
			src.(DB).DB.QueryRow(`SELECT count(*) FROM task_facts WHERE classified`).Scan(&n)
			if (name == "none") != (n == 0) {
				t.Fatalf("%s: store %s has %d classified facts", fixture, name, n)
			}
		}
		for _, tax := range []*taxonomy.Taxonomy{taxonomy.Default(), otherTaxonomy(t)} {
			results := map[string]string{}
			for name, src := range stores {
				f := Filter{By: []string{"task_type"}}
				hints, err := Hints(ctx, src, f, tax, DefaultHintsConfig())
				if err != nil {
					t.Fatal(err)
				}
				maps, err := Mappings(ctx, src, Filter{}, tax, DefaultMappingsConfig())
				if err != nil {
					t.Fatal(err)
				}
				rules, err := LearnRules(ctx, src, Filter{}, tax, DefaultRulesConfig(), now)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal([]any{hints, maps, rules})
				results[name] = string(b)
			}
			for name, got := range results {
				if got != results["none"] {
					t.Errorf("%s, analysis taxonomy %s: the store classified with %s gives\n%s\nunclassified:\n%s",
						fixture, tax.ID(), name, got, results["none"])
				}
			}
		}
	}
}

// Opening a store with another taxonomy classifies every stored fact
// again, as the Go classifier would (taxonomytest).
func TestStoreReclassifiesOnATaxonomyChange(t *testing.T) {
	ctx := t.Context()
	path := testdb.Build(t, testdb.Options{Taxonomy: taxonomy.Default()}, testdb.Input{Name: "input", Data: analyzeFixture(t, "hints_edge.jsonl")})
	other := otherTaxonomy(t)
	st, err := store.OpenWith(ctx, path, store.Options{Taxonomy: other})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var id string
	st.DB().QueryRow(`SELECT classifier FROM facts_classifier`).Scan(&id)
	if id != other.ID() {
		t.Fatalf("facts_classifier = %q, want %q", id, other.ID())
	}
	rows, err := st.DB().Query(`SELECT description, class_type FROM task_facts_stored WHERE classified`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	classify := taxonomytest.Classifier(other)
	n := 0
	for rows.Next() {
		var d string
		var typ sql.NullString
		if err := rows.Scan(&d, &typ); err != nil {
			t.Fatal(err)
		}
		want := classify(d)
		got := typ.String
		if !typ.Valid {
			got = other.Fallback
		}
		if got != want {
			t.Errorf("%q stored as %q, the Go classifier says %q", d, got, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no classified facts: the test checks nothing")
	}
}
