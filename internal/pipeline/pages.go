package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/taxonomy"
	"github.com/evosignal/evosignal/internal/web"
)

// pagesTimeout bounds a page's queries when no query service sets one.
const pagesTimeout = 30 * time.Second

// withPages serves the live pages (internal/web) at / beside h, which
// keeps /metrics, /healthz and /seal; every response then carries the
// pages' security headers. The pages read the store's database through
// the query service's guard (sqlservice.Local), locked down first. When
// the server requires authentication, the pages are behind its users
// (bus.SignIn); /metrics and /healthz stay open, for scrapers and probes.
func (p *Pipeline) withPages(ctx context.Context, h http.Handler) (http.Handler, error) {
	q := &storeQuerier{current: p.st.DB, timeout: pagesTimeout}
	if p.cfg.Query != nil {
		q.timeout = p.cfg.Query.Timeout
	}
	if _, err := q.db(ctx); err != nil {
		return nil, err
	}
	pc := *p.cfg.Pages
	pc.Querier = q
	if t, ok := p.cfg.Store.Taxonomy.(*taxonomy.Taxonomy); ok && pc.Taxonomy == nil {
		pc.Taxonomy = t
	}
	if pc.Log == nil {
		pc.Log = p.log.With("component", "pages")
	}
	pages, err := web.New(pc)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.Handle("/healthz", h)
	mux.Handle("/seal", h)
	if p.nc.AuthRequired() {
		pm := http.NewServeMux()
		pages.Register(pm)
		mux.Handle("/", p.pagesSignIn().Wrap(pm))
	} else {
		pages.Register(mux)
	}
	return web.Secure(mux), nil
}

// storeQuerier answers the pages from the store's current database (the
// store may open its file again after a fatal error: the new database is
// locked down before its first query).
type storeQuerier struct {
	current func() *sql.DB // the store's database now (store.Store.DB)
	timeout time.Duration

	mu     sync.Mutex
	locked *sql.DB
}

var _ sqlservice.Querier = (*storeQuerier)(nil)

func (q *storeQuerier) db(ctx context.Context) (*sql.DB, error) {
	db := q.current()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.locked != db {
		if err := sqlservice.Lockdown(ctx, db); err != nil {
			return nil, fmt.Errorf("pages: %w", err)
		}
		q.locked = db
	}
	return db, nil
}

// Query runs req through the guard on the current database.
func (q *storeQuerier) Query(ctx context.Context, req sqlservice.Request) (*sqlservice.Result, error) {
	db, err := q.db(ctx)
	if err != nil {
		return nil, err
	}
	return sqlservice.Local{DB: db, Timeout: q.timeout}.Query(ctx, req)
}
