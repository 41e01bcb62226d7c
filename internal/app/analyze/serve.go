package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/sqlservice"
	"github.com/evosignal/evosignal/internal/web"
)

// serveReport serves the live pages (internal/web) over what the report
// would read — the database file (read-only, locked down), the query
// service (-nats) or the lake — on -serve until ctx ends. Through the
// query service the pages are live: the ingester keeps committing; and
// when its NATS server requires authentication, the pages are behind its
// users (bus.SignIn), as an ingester's are.
func serveReport(ctx context.Context, f *reportFlags, stdout io.Writer) error {
	var q sqlservice.Querier
	var signIn *bus.SignIn
	if f.nats != "" {
		nc, subject, err := connectNATS(f.nats, f.conn)
		if err != nil {
			return err
		}
		defer nc.Close()
		q = sqlservice.NewClient(nc, subject)
		if nc.AuthRequired() {
			// The pages show what this process's credentials may read:
			// they are behind the server's users, as an ingester's are.
			conn := f.conn
			conn.URL, _ = splitNATS(f.nats)
			signIn = &bus.SignIn{Conn: conn}
		}
	} else {
		o := &sqlOptions{db: f.db, conn: f.conn, read: f.read, lake: f.lake}
		var closeQ func()
		var err error
		if q, closeQ, err = o.querier(ctx); err != nil {
			return err
		}
		defer closeQ()
	}
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
	var h http.Handler = pages
	if signIn != nil {
		mux := http.NewServeMux()
		pages.Register(mux)
		h = web.Secure(signIn.Wrap(mux))
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
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
