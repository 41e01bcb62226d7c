package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/pipeline"
	"github.com/evosignal/evosignal/internal/web"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// TestPagesBehindUsers: with a server that has users
// (testdata/nats/agents.conf), the pages ask for credentials and let
// through whom the server accepts, checked against the server itself; a
// wrong password or none is refused; /healthz and /metrics stay open; the
// CSP is on every response.
func TestPagesBehindUsers(t *testing.T) {
	cfg := testConfig(t)
	cfg.Server.ConfigFile = "../../testdata/nats/agents.conf"
	cfg.NATS.User, cfg.NATS.Password = "ingest", "ingest-secret"
	cfg.HTTP = fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	pc := web.DefaultConfig(nil)
	cfg.Pages = &pc
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	base := "http://" + cfg.HTTP
	get := func(path, user, pass string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" || pass != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET %s: CSP %q", path, res.Header.Get("Content-Security-Policy"))
		}
		return res
	}
	for _, c := range []struct {
		path, user, pass string
		want             int
	}{
		{"/", "", "", http.StatusUnauthorized},
		{"/sessions", "analyst", "wrong", http.StatusUnauthorized},
		{"/", "nobody", "analyst-secret", http.StatusUnauthorized},
		{"/", "analyst", "analyst-secret", http.StatusOK},
		{"/sessions", "analyst", "analyst-secret", http.StatusOK},
		{"/sessions", "analyst", "analyst-secret", http.StatusOK}, // remembered
		{"/healthz", "", "", http.StatusOK},
		{"/metrics", "", "", http.StatusOK},
	} {
		res := get(c.path, c.user, c.pass)
		if res.StatusCode != c.want {
			t.Errorf("GET %s as %q/%q: %d, want %d", c.path, c.user, c.pass, res.StatusCode, c.want)
		}
		if c.want == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s: 401 without WWW-Authenticate", c.path)
		}
	}
}
