package otlpin

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics puts a receiver's limits' counts on the ingester's /metrics.
// The /metrics server starts before the receiver: every figure is 0 until
// Attach.
type Metrics struct{ r atomic.Pointer[Receiver] }

// Attach makes m report r.
func (m *Metrics) Attach(r *Receiver) { m.r.Store(r) }

// Collectors returns the receiver's metrics.
func (m *Metrics) Collectors() []prometheus.Collector {
	stat := func(f func(*Receiver) int64) func() float64 {
		return func() float64 {
			r := m.r.Load()
			if r == nil {
				return 0
			}
			return float64(f(r))
		}
	}
	counter := func(name, help string, f func(*Receiver) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, stat(f))
	}
	gauge := func(name, help string, f func(*Receiver) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, stat(f))
	}
	refused := func(reason, help string, f func(RequestStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_otlp_requests_refused_total", Help: "OTLP requests refused past a limit, by reason.",
			ConstLabels: prometheus.Labels{"reason": reason}}, stat(func(r *Receiver) int64 { return f(r.Requests()) }))
	}
	return []prometheus.Collector{
		counter("evosignal_otlp_spans_total", "Spans received over OTLP.", func(r *Receiver) int64 { return r.Stats().Spans }),
		counter("evosignal_otlp_log_records_total", "Log records received over OTLP.", func(r *Receiver) int64 { return r.Stats().LogRecords }),
		counter("evosignal_otlp_log_records_late_total", "Log records of tool calls or prompts that came after their trace was mapped, dropped.", func(r *Receiver) int64 { return r.Stats().LogsAfterMapped }),
		counter("evosignal_otlp_sessions_total", "Sessions mapped from OTLP traces.", func(r *Receiver) int64 { return r.Stats().Sessions }),
		counter("evosignal_otlp_traces_evicted_total", "Buffered traces dropped unmapped because the buffer's byte or span limit was reached.", func(r *Receiver) int64 { return r.Stats().Evicted }),
		counter("evosignal_otlp_evicted_bytes_total", "Bytes (estimated) of the spans of evicted traces.", func(r *Receiver) int64 { return r.Stats().EvictedBytes }),
		counter("evosignal_otlp_traces_expired_total", "Traces without a GenAI span dropped after -otlp-max-idle.", func(r *Receiver) int64 { return r.Stats().Expired }),
		counter("evosignal_otlp_sessions_cut_total", "Sessions mapped from a trace whose earlier spans were evicted or expired.", func(r *Receiver) int64 { return r.Stats().Cut }),
		counter("evosignal_otlp_events_dead_lettered_total", "Events larger than the bus takes, dead-lettered as oversize.", func(r *Receiver) int64 { return r.DeadLettered() }),
		gauge("evosignal_otlp_buffered_traces", "Traces buffered now, waiting to be complete.", func(r *Receiver) int64 { return r.Stats().Waiting }),
		gauge("evosignal_otlp_buffered_bytes", "Bytes (estimated) of the spans and log records buffered now.", func(r *Receiver) int64 { return r.Stats().WaitingBytes }),
		gauge("evosignal_otlp_requests_in_flight_peak", "Most OTLP requests in flight at once so far.", func(r *Receiver) int64 { return r.Requests().Peak }),
		refused("busy", "", func(s RequestStats) int64 { return s.Busy }),
		refused("too_large", "", func(s RequestStats) int64 { return s.TooLarge }),
		refused("permanent", "", func(s RequestStats) int64 { return s.Permanent }),
		refused("retryable", "", func(s RequestStats) int64 { return s.Retryable }),
	}
}
