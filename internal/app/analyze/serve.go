package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/evosignal/evosignal/internal/web"
)

// serveReport serves the live pages (internal/web) over what the report
// would read — the database file (read-only, locked down), the query
// service (-nats) or the lake — on -serve until ctx ends. Through the
// query service the pages are live: the ingester keeps committing.
func serveReport(ctx context.Context, f *reportFlags, stdout io.Writer) error {
	o := &sqlOptions{db: f.db, nats: f.nats, conn: f.conn, read: f.read, lake: f.lake}
	q, closeQ, err := o.querier(ctx)
	if err != nil {
		return err
	}
	defer closeQ()
	cfg := web.DefaultConfig(q)
	cfg.Live = f.nats != ""
	cfg.Taxonomy = f.cfg.Taxonomy
	if f.until != "" {
		// -until ends the pages' default window (a stopped database's
		// sessions are rarely from the last 24h); the form still sets it.
		until := f.cfg.Until
		cfg.Now = func() time.Time { return until }
	}
	pages, err := web.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.serve)
	if err != nil {
		return fmt.Errorf("-serve %s: %w", f.serve, err)
	}
	srv := &http.Server{Handler: pages, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "serving the pages at http://%s/ (interrupt to stop)\n", ln.Addr())
	select {
	case err := <-done:
		return fmt.Errorf("-serve %s: %w", f.serve, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
