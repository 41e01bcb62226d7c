package web_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/store"
	"github.com/evosignal/evosignal/internal/web"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// sampleDB is the hand-written sample sessions in a database file, opened
// read-only and locked down as analyze report -serve opens it.
func sampleDB(tb testing.TB, inputs ...testdb.Input) *sql.DB {
	tb.Helper()
	if len(inputs) == 0 {
		inputs = testdb.Files(tb, testdb.SampleSessions(tb)...)
	}
	path := testdb.Build(tb, testdb.Options{}, inputs...)
	db, err := store.OpenReadOnly(tb.Context(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := sqlservice.Lockdown(tb.Context(), db); err != nil {
		tb.Fatal(err)
	}
	return db
}

// serve starts the pages over db on a test server.
func serve(tb testing.TB, db *sql.DB, now time.Time, live bool) *httptest.Server {
	tb.Helper()
	cfg := web.DefaultConfig(sqlservice.Local{DB: db, Timeout: 30 * time.Second})
	cfg.Live = live
	cfg.Now = func() time.Time { return now }
	s, err := web.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return ts
}

// get fetches path and returns the response and its body.
func get(tb testing.TB, ts *httptest.Server, path string) (*http.Response, string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, string(b)
}

func contains(tb testing.TB, what, body string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			tb.Errorf("%s lacks %q", what, w)
		}
	}
}
