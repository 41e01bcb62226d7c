package analyze

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/web"
	"github.com/evosignal/evosignal/internal/workshop/reporttest"
)

// TestReportServe: analyze report -serve serves the pages over the
// database file, with the CSP, until its context ends, and then returns
// without an error; -serve and -out exclude each other.
func TestReportServe(t *testing.T) {
	db := reporttest.DB(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"report", "-db", db, "-serve", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("read the address: %v (run: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	base, _, ok := strings.Cut(strings.TrimPrefix(line, "serving the pages at "), " ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("stdout = %q, want the address it serves at", line)
	}
	for _, path := range []string{"", "sessions", "analyze/hints?window=7d&until=2025-06-10"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET /%s = %d with CSP %q:\n%.500s", path, res.StatusCode, res.Header.Get("Content-Security-Policy"), body)
		}
		if strings.Contains(string(body), "data-live-version") {
			t.Errorf("GET /%s polls for updates over a database file nothing writes", path)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("analyze report -serve after its context ended: %v", err)
	}
	if err := run(t.Context(), []string{"report", "-db", db, "-serve", ":0", "-out", t.TempDir()}, io.Discard, io.Discard); err == nil {
		t.Error("-serve with -out: no error")
	}
}
