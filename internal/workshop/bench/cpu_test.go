package bench

import (
	"bytes"
	"math"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/events"
)

// stageOf gives a sample to the stage nearest its leaf: an allocation made
// while decoding is decoding's, the validator inside the decoder is
// validation's, and a frame of no stage's is "other".
func TestStageOfNearestLeaf(t *testing.T) {
	for _, c := range []struct {
		stack []string
		want  string
	}{
		{[]string{"runtime.mallocgc", "github.com/evosignal/evosignal/internal/events.(*decoder).decode", "github.com/evosignal/evosignal/internal/ingest.classify"}, "decode"},
		{[]string{"github.com/evosignal/evosignal/internal/events.(*validator).object", "github.com/evosignal/evosignal/internal/events.(*decoder).decode"}, "validate"},
		{[]string{"C.duckdb_append_data_chunk", "github.com/duckdb/duckdb-go/v2.(*Appender).Flush", "github.com/evosignal/evosignal/internal/store.(*Store).commit"}, "append"},
		{[]string{"github.com/duckdb/duckdb-go/v2.(*Conn).ExecContext", "github.com/evosignal/evosignal/internal/store.(*Store).commit"}, "commit"},
		{[]string{"github.com/nats-io/nats-server/v2/server.(*stream).processJetStreamMsg"}, "nats-server"},
		{[]string{"runtime.scanobject", "runtime.gcBgMarkWorker"}, "gc"},
		{[]string{"runtime._ExternalCode"}, "duckdb-threads"},
		{[]string{"github.com/duckdb/duckdb-go/v2.(*Conn).ExecContext", "github.com/evosignal/evosignal/internal/store.(*checkpointer).checkpoint"}, "checkpoint"},
		{[]string{"github.com/duckdb/duckdb-go/v2.(*Conn).ExecContext", "github.com/evosignal/evosignal/internal/store.inTx",
			"github.com/evosignal/evosignal/internal/store.(*Store).RefreshFacts", "github.com/evosignal/evosignal/internal/ingest.(*natsRun).commitLoop"}, "facts"},
		{[]string{"runtime.futex", "runtime.schedule"}, "other"},
	} {
		if got := stageOf(c.stack); got != c.want {
			t.Errorf("stageOf(%v) = %q, want %q", c.stack, got, c.want)
		}
	}
}

// A real profile of decoding splits the process's CPU: the stages sum to
// the CPU an event, and decoding (with validation) holds most of what Go
// code of a named stage spent.
func TestCPUBreakdownOfARealProfile(t *testing.T) {
	raw := []byte(`{"specversion":"1.0","id":"e1","source":"skilllite/a1","type":"agent.tool.called","subject":"s1","time":"2026-11-01T00:00:00Z","seq":3,"datacontenttype":"application/json","data":{"tool":"read_file","ok":true,"duration_ms":12,"task_id":1,"hint":null,"control":false}}`)
	if _, err := events.Decode(raw); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skip("a CPU profile is already running:", err)
	}
	t0, c0 := time.Now(), cpuTime()
	n := int64(0)
	for time.Since(t0) < 500*time.Millisecond {
		if _, err := events.Decode(raw); err != nil {
			t.Fatal(err)
		}
		n++
	}
	pprof.StopCPUProfile()
	cpu := (cpuTime() - c0).Seconds()
	b, err := cpuBreakdown(buf.Bytes(), cpu, n)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range b.Stages {
		sum += v
	}
	if math.Abs(sum-b.PerEvent) > 1e-6*b.PerEvent {
		t.Errorf("stages sum to %.4f µs, the CPU an event is %.4f", sum, b.PerEvent)
	}
	// The process's other threads (DuckDB's pools left by earlier tests,
	// the race detector's) may take CPU meanwhile: judge decoding against
	// the samples that have a named stage of Go code.
	named := 0.0
	for s, v := range b.Stages {
		if s != "other" && s != "duckdb-threads" {
			named += v
		}
	}
	if d := b.Stages["decode"] + b.Stages["validate"]; d <= 0 || d < 0.5*named {
		t.Errorf("decode+validate %.3f of %.3f µs an event in named stages (%s); want most of it", d, named, b)
	}
}
