package ingest

import (
	"encoding/json"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/evosignal/evosignal/internal/store"
)

// Handler serves /metrics (Prometheus text format: the ingester's, and
// extra, the metrics of the parts beside it) and /healthz (200 while the
// last commit succeeded, 503 with the error otherwise; while commits fail
// for a reason of the environment the body says "stalled" and since when).
func (in *Ingester) Handler(extra ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(extra...)
	snap := func(f func(Snapshot) float64) func() float64 {
		return func() float64 { return f(in.stats.Snapshot()) }
	}
	counter := func(name, help string, f func(Snapshot) float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, snap(f)))
	}
	gauge := func(name, help string, f func(Snapshot) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, snap(f)))
	}
	reg.MustRegister(outcomeCollector{in.stats}, in.stats.commits, buildInfo())
	counter("evosignal_ingest_redeliveries_total", "JetStream redeliveries of messages already taken.", func(s Snapshot) float64 { return float64(s.Redelivered) })
	counter("evosignal_ingest_batches_total", "Batches committed.", func(s Snapshot) float64 { return float64(s.Batches) })
	counter("evosignal_ingest_reanchors_total", "Times the consumer was re-anchored at the committed position after a delivery gap.", func(s Snapshot) float64 { return float64(s.Reanchors) })
	counter("evosignal_ingest_skipped_messages_total", "Stream messages removed (retention, deletes) before the ingester read them.", func(s Snapshot) float64 { return float64(s.Skipped) })
	counter("evosignal_ingest_facts_refreshes_total", "Refreshes that stored the analysis facts of pending sessions.", func(s Snapshot) float64 { return float64(s.FactsRefreshes) })
	counter("evosignal_ingest_facts_sessions_total", "Sessions whose analysis facts were stored (a session counts once per refresh).", func(s Snapshot) float64 { return float64(s.FactsSessions) })
	counter("evosignal_ingest_facts_seconds_total", "Time spent storing analysis facts.", func(s Snapshot) float64 { return s.FactsSecs })
	counter("evosignal_ingest_facts_failures_total", "Facts refreshes that failed (queries stay exact, computing the facts on the fly).", func(s Snapshot) float64 { return float64(s.FactsFailures) })
	counter("evosignal_ingest_commit_retries_total", "Commits retried after the database failed for a reason of the environment (disk full, out of memory, I/O).", func(s Snapshot) float64 { return float64(s.Retries) })
	gauge("evosignal_ingest_stalled", "1 while commits fail for a reason of the environment and the ingester holds the stream (nothing acked), else 0.", func(s Snapshot) float64 {
		if s.StalledSince.IsZero() {
			return 0
		}
		return 1
	})
	// The store's checkpoints (store.Store.CheckpointStats), read at each
	// scrape without waiting for a batch.
	ck := func(f func(store.CheckpointStats) float64) func() float64 {
		return func() float64 { return f(in.store.CheckpointStats()) }
	}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_store_checkpoints_total", Help: "Checkpoints of the WAL into the database file, run by the store beside the writer."},
			ck(func(c store.CheckpointStats) float64 { return float64(c.Checkpoints) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_store_checkpoint_failures_total", Help: "Checkpoints that failed (the WAL keeps everything; the next commit tries again)."},
			ck(func(c store.CheckpointStats) float64 { return float64(c.Failures) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_store_checkpoint_seconds_total", Help: "Time spent in successful checkpoints."},
			ck(func(c store.CheckpointStats) float64 { return c.Total.Seconds() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "evosignal_store_checkpoint_last_duration_seconds", Help: "Duration of the last successful checkpoint."},
			ck(func(c store.CheckpointStats) float64 { return c.Last.Seconds() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "evosignal_store_wal_bytes", Help: "Size of the database's write-ahead log (<db>.wal): what the next checkpoint writes, and what a restart replays."},
			ck(func(c store.CheckpointStats) float64 { return float64(c.WAL) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_store_wal_limit_waits_total", Help: "Batches that waited for a checkpoint because the WAL had reached its limit (-wal-limit)."},
			ck(func(c store.CheckpointStats) float64 { return float64(c.Waits) })),
	)
	gauge("evosignal_ingest_last_stream_seq", "Last stream sequence taken.", func(s Snapshot) float64 { return float64(s.LastSeq) })
	gauge("evosignal_ingest_lag_messages", "Messages in the stream not yet delivered to the ingester.", func(s Snapshot) float64 { return float64(s.Pending) })
	gauge("evosignal_ingest_last_commit_timestamp_seconds", "Unix time of the last committed batch.", func(s Snapshot) float64 {
		if s.LastCommit.IsZero() {
			return 0
		}
		return float64(s.LastCommit.UnixNano()) / 1e9
	})

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		s := in.stats.Snapshot()
		body := map[string]any{
			"status": "ok", "messages": s.Messages, "last_stream_seq": s.LastSeq, "lag": s.Pending,
			"uptime_s": int64(time.Since(s.Started).Seconds()),
		}
		code := http.StatusOK
		if s.LastErr != nil {
			body["status"], body["error"] = "failing", s.LastErr.Error()
			code = http.StatusServiceUnavailable
		}
		if !s.StalledSince.IsZero() {
			body["status"], body["stalled_since"] = "stalled", s.StalledSince.UTC().Format(time.RFC3339)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(body)
	})
	return mux
}

var (
	messagesDesc = prometheus.NewDesc("evosignal_ingest_messages_total",
		"Messages committed, by outcome: accepted into the event log, duplicate (its source and id already stored, same content: skipped) or dead_letter.",
		[]string{"outcome"}, nil)
	deadLettersDesc = prometheus.NewDesc("evosignal_ingest_dead_letters_total",
		"Messages written to dead_letters, by reason (the dead_letters.code column: schema_violation, malformed_json, unknown_type, oversize, source_mismatch, plan_too_large, conflicting_duplicate, after_session_end, store_rejected).",
		[]string{"reason"}, nil)
)

// outcomeCollector exports the ingester's counters that carry labels.
type outcomeCollector struct{ stats *Stats }

func (c outcomeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- messagesDesc
	ch <- deadLettersDesc
}

func (c outcomeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats.Snapshot()
	for _, o := range []struct {
		outcome string
		n       int64
	}{{"accepted", s.Accepted}, {"duplicate", s.Duplicates}, {"dead_letter", s.DeadLetters}} {
		ch <- prometheus.MustNewConstMetric(messagesDesc, prometheus.CounterValue, float64(o.n), o.outcome)
	}
	for reason, n := range s.DeadLettersByReason {
		ch <- prometheus.MustNewConstMetric(deadLettersDesc, prometheus.CounterValue, float64(n), reason)
	}
}

// buildInfo is the evosignal_build_info gauge: always 1, its labels the
// module version, VCS revision and Go version of the running binary (from
// runtime/debug build info; "(devel)" and "unknown" where the build did not
// record them, as in go test or go run).
func buildInfo() prometheus.Collector {
	version, revision, goVersion := "(devel)", "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" {
				revision = kv.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "evosignal_build_info",
		Help:        "Always 1; the labels say which build of evosignal is running.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion},
	}, func() float64 { return 1 })
}
