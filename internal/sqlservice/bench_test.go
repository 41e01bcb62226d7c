package sqlservice

import (
	"fmt"
	"io"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// BenchmarkLargeResult reads the same large result directly (database/sql),
// through Local, and through the service (Arrow over TCP to an embedded
// nats-server, and JSON-free); it reports rows/s and, for the service, MB/s
// of Arrow on the wire.
func BenchmarkLargeResult(b *testing.B) {
	const rows = 500_000
	st := sampleStore(b, 0)
	srv, nc, _ := testkit.Embedded(b)
	startService(b, nc, st.DB(), func(c *Config) { c.MaxRows = rows; c.Timeout = 600e9 })
	cnc, _ := testkit.Client(b, srv.ClientURL())
	client := NewClient(cnc, "")
	q := bigSQL(rows)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if n := len(direct(b, st.DB(), q).Rows); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			res, err := (Local{DB: st.DB()}).Query(b.Context(), Request{SQL: q})
			if err != nil || len(res.Rows) != rows {
				b.Fatalf("%v, %v", res, err)
			}
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	// The stream alone, as a client that hands the Arrow stream on (to
	// pyarrow, to a file) sees it.
	b.Run("service-stream", func(b *testing.B) {
		for b.Loop() {
			r, err := client.open(b.Context(), Request{SQL: q, Format: FormatArrow})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
			r.close()
			if r.rows != rows {
				b.Fatalf("%d rows", r.rows)
			}
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("service", func(b *testing.B) {
		var bytes int64
		var msgs int
		for b.Loop() {
			res, stats, err := client.QueryStats(b.Context(), Request{SQL: q})
			if err != nil || len(res.Rows) != rows {
				b.Fatalf("%v, %v", res, err)
			}
			bytes, msgs = stats.Bytes, stats.Messages
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(bytes*int64(b.N))/1e6/b.Elapsed().Seconds(), "MB/s")
		b.ReportMetric(float64(msgs), "msgs")
		b.Log(fmt.Sprintf("%d rows: %d bytes of Arrow in %d messages", rows, bytes, msgs))
	})
}
