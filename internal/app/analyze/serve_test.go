package analyze

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/web"
	"github.com/evosignal/evosignal/internal/workshop/reporttest"
	"github.com/evosignal/evosignal/internal/workshop/testdb"
)

// TestReportServe: analyze report -serve serves the pages over the
// database file, with the CSP, until its context ends, and then returns
// without an error; -serve and -out exclude each other.
func TestReportServe(t *testing.T) {
	db := reporttest.DB(t)
	serveGet(t, []string{"-db", db}, "", "sessions", "analyze/hints?window=7d&until=2025-06-10")
	if err := run(t.Context(), []string{"report", "-db", db, "-serve", ":0", "-out", t.TempDir()}, io.Discard, io.Discard); err == nil {
		t.Error("-serve with -out: no error")
	}
}

// TestReportServeLake: analyze report -serve -lake serves the same pages,
// byte for byte, as -serve -db over one database of the same events.
func TestReportServeLake(t *testing.T) {
	files := testdb.Files(t, testdb.SampleSessions(t)...)
	one := testdb.Build(t, testdb.Options{}, files...)
	dir := filepath.Join(t.TempDir(), "lake")
	sealShard(t, dir, "a", files[:len(files)/2]...)
	sealShard(t, dir, "b", files[len(files)/2:]...)
	paths := []string{"?window=800d&until=2027-01-01", "sessions", "sessions?window=800d&until=2027-01-01&min_replans=1",
		"sessions/c0d3r-2025-06-13-0042", "analyze/hints?window=800d&until=2027-01-01",
		"analyze/rules?window=800d&until=2027-01-01", "analyze/effects?window=800d&until=2027-01-01"}
	want := serveGet(t, []string{"-db", one}, paths...)
	got := serveGet(t, []string{"-lake", dir}, paths...)
	for i, p := range paths {
		g, w := strings.Split(got[i], "\n"), strings.Split(want[i], "\n")
		for l := range max(len(g), len(w)) {
			if l >= len(g) || l >= len(w) || g[l] != w[l] {
				t.Errorf("GET /%s over the lake differs from over the database from line %d:\n%s\nwant:\n%s",
					p, l+1, strings.Join(g[l:min(l+3, len(g))], "\n"), strings.Join(w[l:min(l+3, len(w))], "\n"))
				break
			}
		}
	}
}

// serveGet runs analyze report -serve with flags, fetches each path
// (checking the status, the CSP and that nothing polls) and stops it; it
// returns the bodies.
func serveGet(t *testing.T, flags []string, paths ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base, done := startServe(t, ctx, flags...)
	var bodies []string
	for _, path := range paths {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET /%s = %d with CSP %q:\n%.4000s", path, res.StatusCode, res.Header.Get("Content-Security-Policy"), body)
		}
		if strings.Contains(string(body), "data-live-version") {
			t.Errorf("GET /%s polls for updates over a database nothing writes", path)
		}
		bodies = append(bodies, string(body))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("analyze report -serve after its context ended: %v", err)
	}
	return bodies
}

// TestReportServeNATSSignIn: analyze report -serve -nats serves the live
// pages through the query service, and when the NATS server requires
// authentication they are behind its users: no credentials or a wrong
// token get 401 (with the CSP), the server's token gets the pages, which
// poll for updates.
func TestReportServeNATSSignIn(t *testing.T) {
	const token = "s3cret"
	url, _, _, _ := tokenService(t, token)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base, done := startServe(t, ctx, "-nats", url, "-token", token)
	get := func(path, user, pass string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if pass != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET /%s: no CSP", path)
		}
		return res.StatusCode, string(body)
	}
	for _, c := range []struct{ user, pass string }{{"", ""}, {"", "wrong"}, {"someone", token}} {
		if code, _ := get("", c.user, c.pass); code != http.StatusUnauthorized {
			t.Errorf("GET / as %q/%q = %d, want 401", c.user, c.pass, code)
		}
	}
	for _, p := range []string{"", "sessions", "analyze/hints?window=800d&until=2027-01-01"} {
		code, body := get(p, "", token)
		if code != http.StatusOK {
			t.Errorf("GET /%s with the token = %d:\n%.2000s", p, code, body)
		}
		if p == "" && !strings.Contains(body, "data-live-version") {
			t.Errorf("GET / through the query service does not poll for updates")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("analyze report -serve -nats after its context ended: %v", err)
	}
}

// startServe runs analyze report -serve 127.0.0.1:0 with flags until ctx
// ends, and returns the address it serves at (http://…/) and its result.
func startServe(t *testing.T, ctx context.Context, flags ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"report", "-serve", "127.0.0.1:0"}, flags...), pw, io.Discard)
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
	return base, done
}
