package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// Config configures the pages.
type Config struct {
	// Querier answers every query of the pages: sqlservice.Local over a
	// locked-down database, or a sqlservice.Client.
	Querier sqlservice.Querier
	// Taxonomy classifies tasks for the hints, mappings and rules tables;
	// nil: the embedded default.
	Taxonomy *taxonomy.Taxonomy
	// Live makes the overview and the session list poll for new events
	// every Poll and update in place; off for a database nothing writes
	// (then the data has one version, and /live/version reads nothing).
	Live bool
	Poll time.Duration
	// PageSize is the rows of a page of the session list and of the raw
	// events.
	PageSize int
	// Now is the clock the default window ends at; nil: time.Now.
	Now func() time.Time
	// Log receives the errors of requests (a page shows the user a short
	// message); nil discards them.
	Log *slog.Logger
	// CacheFor is how long the overview, the analyzers' tables and the
	// filter's choices are served again while the data does not change
	// (no batch committed); 0 computes them on every request.
	CacheFor time.Duration
}

// DefaultConfig is the ingester's: live, polling every 2s, 50 sessions
// a page, analyses kept a minute while the data does not change.
func DefaultConfig(q sqlservice.Querier) Config {
	return Config{Querier: q, Live: true, Poll: 2 * time.Second, PageSize: 50, CacheFor: time.Minute}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Querier == nil {
		errs = append(errs, errors.New("web: no querier to read the database through"))
	}
	if c.Live && c.Poll <= 0 {
		errs = append(errs, fmt.Errorf("web: poll interval %s: want more than 0", c.Poll))
	}
	if c.CacheFor < 0 {
		errs = append(errs, fmt.Errorf("web: cache for %s: want 0 or more", c.CacheFor))
	}
	if c.PageSize < 1 || c.PageSize > 1000 {
		errs = append(errs, fmt.Errorf("web: page size %d: want 1 to 1000", c.PageSize))
	}
	return errors.Join(errs...)
}

// CSP is the Content-Security-Policy of every response: nothing but this
// server's own files, and no inline script or style.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

//go:embed static
var staticFS embed.FS

// Server serves the pages.
type Server struct {
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	cache *cache
}

// New checks cfg and returns the pages' server.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Taxonomy == nil {
		cfg.Taxonomy = taxonomy.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, log: cfg.Log, mux: http.NewServeMux(), cache: newCache(cfg.CacheFor, 64)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Register(s.mux)
	return s, nil
}

// Register adds the pages' routes to mux: /, /sessions, /sessions/{id},
// /analyze/{table}, /live/version and /static/.
func (s *Server) Register(mux *http.ServeMux) {
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /static/report.css", s.reportCSS)
	mux.HandleFunc("GET /{$}", s.page(s.cached(s.overview)))
	mux.HandleFunc("GET /sessions", s.page(s.sessions))
	mux.HandleFunc("GET /sessions/{id}", s.page(s.session))
	mux.HandleFunc("GET /analyze/{table}", s.page(s.cached(s.table)))
	mux.HandleFunc("GET /live/version", s.version)
}

// ServeHTTP serves the pages (with the security headers of Secure).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	Secure(s.mux).ServeHTTP(w, r)
}

// Secure sets the security headers on every response of h: the CSP, no
// MIME sniffing, no referrer.
func Secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// httpError is an error a page shows with its status: a bad parameter
// (400), a session that does not exist (404).
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// page runs a page handler, which renders into a buffer: a failure
// becomes an error page with its status, never half a page.
func (s *Server) page(h func(ctx context.Context, r *http.Request, buf *bytes.Buffer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		err := h(r.Context(), r, &buf)
		if err != nil {
			code, msg := http.StatusInternalServerError, "the page could not be built: "+err.Error()
			var he *httpError
			var qe *sqlservice.Error
			switch {
			case errors.As(err, &he):
				code, msg = he.code, he.msg
			case errors.As(err, &qe) && qe.Code == 408:
				code = http.StatusServiceUnavailable
			}
			if code >= 500 {
				s.log.Error("page", "path", r.URL.Path, "err", err)
			}
			buf.Reset()
			if terr := render(&buf, "error", errorPage{Frame: s.frame("Error", ""), Code: code, Message: msg}); terr != nil {
				http.Error(w, msg, code)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(code)
			w.Write(buf.Bytes())
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(buf.Bytes())
	}
}

// cached serves h's page from the cache while the data has not changed:
// the same request (path and query) at the same data version.
func (s *Server) cached(h func(ctx context.Context, r *http.Request, buf *bytes.Buffer) error) func(context.Context, *http.Request, *bytes.Buffer) error {
	return func(ctx context.Context, r *http.Request, buf *bytes.Buffer) error {
		version, err := s.dataVersion(ctx)
		if err != nil {
			return err
		}
		v, err := s.cache.get("page "+r.URL.RequestURI(), version, func() (any, error) {
			var b bytes.Buffer
			// Not the request's context: the others waiting for it must not
			// see its client go away.
			err := h(context.WithoutCancel(ctx), r, &b)
			return b.Bytes(), err
		})
		if err != nil {
			return err
		}
		buf.Write(v.([]byte))
		return nil
	}
}

// version answers the live pages' poll: a token that changes when a batch
// is committed.
func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	v, err := s.dataVersion(r.Context())
	if err != nil {
		s.log.Error("live version", "err", err)
		http.Error(w, "the database could not be read", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, v)
}
