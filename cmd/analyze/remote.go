package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/query"
)

// remote is a metrics.Source answered by the ingester's query service
// (docs/query-service.md): the same SQL, the same Go values as metrics.DB
// gives from the file.
type remote struct{ c *query.Client }

var _ metrics.Source = remote{}

// Query runs q through the service. A result the service cut off at its row
// limit is an error: an analysis of part of the rows would be wrong.
func (r remote) Query(ctx context.Context, q string, args ...any) (*metrics.Table, error) {
	req, err := query.NewRequest(q, args...)
	if err != nil {
		return nil, err
	}
	res, err := r.c.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		return nil, fmt.Errorf("the query service cut the result off at %d rows (its -query-max-rows); an analysis needs them all", len(res.Rows))
	}
	return &metrics.Table{Columns: res.Columns, Rows: res.Rows}, nil
}

// splitNATS splits a -nats value, URL[,URL…][#subject], into the server
// URLs and the query service's subject ("" for the default).
func splitNATS(spec string) (urls, subject string) {
	urls, subject, _ = strings.Cut(spec, "#")
	return urls, subject
}

// connectNATS connects to the servers of a -nats value, with the
// authentication and TLS of conn (cli.ConnFlags), and returns the
// connection and the query service's subject.
func connectNATS(spec string, conn bus.ConnConfig) (*nats.Conn, string, error) {
	urls, subject := splitNATS(spec)
	conn.URL, conn.Name = urls, "evosignal-analyze"
	nc, err := bus.Connect(conn, nil)
	if err != nil {
		return nil, "", err
	}
	return nc, subject, nil
}

// openRemote is (*common).open for -nats: a Source over the query service.
func openRemote(spec string, conn bus.ConnConfig) (metrics.Source, func() error, error) {
	nc, subject, err := connectNATS(spec, conn)
	if err != nil {
		return nil, nil, err
	}
	return remote{c: query.NewClient(nc, subject)}, func() error { nc.Close(); return nil }, nil
}
