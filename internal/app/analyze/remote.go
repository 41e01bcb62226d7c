package analyze

import (
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/sqlservice"
)

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

// openRemote is (*common).open for -nats: a Source over the query service
// (sqlservice.Source).
func openRemote(spec string, conn bus.ConnConfig) (metrics.Source, func() error, error) {
	nc, subject, err := connectNATS(spec, conn)
	if err != nil {
		return nil, nil, err
	}
	return sqlservice.Source{Client: sqlservice.NewClient(nc, subject)}, func() error { nc.Close(); return nil }, nil
}
