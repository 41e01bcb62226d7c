package metrics

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/workshop/taxonomytest"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
	"github.com/evosignal/evosignal/queries"
)

// ingestedDB loads JSON-lines inputs into a new DuckDB file through the
// ingester and returns it as a Source (closed when the test ends). With
// shuffle set, each input's lines are loaded in a random order in batches
// of 3, so that a session's events arrive out of order and across
// transactions. The store classifies its facts with the default taxonomy,
// as the ingester does.
func ingestedDB(tb testing.TB, shuffle *rand.Rand, inputs ...[]byte) Source {
	tb.Helper()
	return ingestedDBWith(tb, taxonomy.Default(), shuffle, inputs...)
}

// ingestedDBWith is ingestedDB with the store's taxonomy (nil: none).
func ingestedDBWith(tb testing.TB, tax *taxonomy.Taxonomy, shuffle *rand.Rand, inputs ...[]byte) Source {
	tb.Helper()
	o := testdb.Options{Taxonomy: tax, Shuffle: shuffle}
	if shuffle != nil {
		o.BatchSize = 3
	}
	d := testdb.New(tb, o)
	for i, b := range inputs {
		d.Load(tb, testdb.Input{Name: fmt.Sprintf("input-%d", i), Data: b})
	}
	return DB{DB: d.Store().DB()}
}

// analyzeFixture reads a file of testdata/analyze.
func analyzeFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/analyze", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Every analysis query that classifies includes the fragment, and the
// assembled text has no include line left.
func TestClassifyingQueriesIncludeTheFragment(t *testing.T) {
	for _, name := range []string{"analyze/hints.sql", "analyze/mappings.sql", "analyze/rules_replace.sql"} {
		q := classifyingQuery(name)
		if !strings.Contains(q, "tt_typed AS NOT MATERIALIZED (") {
			t.Errorf("classifyingQuery(%s) did not include %s", name, typesFragment)
		}
		if incs, err := queries.Includes(name); err != nil || !slices.Contains(incs, typesFragment) {
			t.Errorf("queries.Includes(%s) = %v, %v; want %s among them", name, incs, err, typesFragment)
		}
	}
}

// The fragment has one CASE branch per possible type, numbered 1 …
// taxonomy.MaxTypes.
func TestTypesFragmentBranches(t *testing.T) {
	q := queries.MustRead("include/classify_case.sql")
	for i := 1; i <= taxonomy.MaxTypes+1; i++ {
		line := fmt.Sprintf("WHEN regexp_matches(d, $tax_patterns[%d]) THEN $tax_types[%d]", i, i)
		if got := strings.Count(q, line); got != 1 && i <= taxonomy.MaxTypes || got != 0 && i > taxonomy.MaxTypes {
			t.Errorf("include/classify_case.sql has %q %d times", line, got)
		}
	}
}

// The SQL classification (one RE2 alternation per type, on lower(description))
// agrees with the Go classifier (taxonomytest) on descriptions in English and Chinese,
// including ones no type matches.
func TestClassifyInSQLAgreesWithGo(t *testing.T) {
	descriptions := []string{
		"Fix the parser bug", "Run the unit tests", "Search the web for the flag", "Write the README",
		"Analyze the latency report", "Remember the user's preferences", "Plan the migration",
		"Check the leaked credentials", "Deploy the service", "Read config.yaml", "Convert notes.pdf",
		"修复登录接口的错误", "运行单元测试", "搜索相关资料", "更新文档", "分析日志", "记住用户的偏好",
		"制定计划", "检查安全漏洞", "部署服务", "读取配置文件", "Say hello", "latest news", "TestUpload flakes",
		"The CVE-2024-1234 advisory", "重写",
	}
	tax := taxonomy.Default()
	var buf bytes.Buffer
	w := agent.NewJSONLWriter(&buf)
	start := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	s := agent.NewSession(w, "skilllite/test", "classify").WithClock(func() time.Time { return start })
	ctx := context.Background()
	tasks := make([]agent.Task, 0, len(descriptions))
	for i, d := range descriptions {
		tasks = append(tasks, agent.Task{ID: int64(i + 1), Description: d})
	}
	must(t, s.Started(ctx, agent.SessionStarted{Goal: "classify", Agent: "skilllite", AgentVersion: "1", Model: "m"}))
	must(t, s.PlanCreated(ctx, agent.PlanCreated{Tasks: tasks, Origin: events.OriginModel}))
	must(t, w.Flush())
	src := ingestedDB(t, nil, buf.Bytes())
	tb, err := runClassifying(ctx, src, "analyze/hints.sql", Filter{By: []string{"task_type"}}, tax)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	err = eachRow(tb, func(c *row) error {
		got[c.need("task_type")] += c.int("planned")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	classify := taxonomytest.Classifier(tax)
	for _, task := range tasks {
		want[classify(task.Description)]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("planned tasks per type: SQL %v, Go %v", got, want)
	}
}

// must fails the test on err.
func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
