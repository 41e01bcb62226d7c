package bench

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// Where an ingest phase's CPU goes, an event at a time: the phase's CPU
// profile (always taken for ingest and concurrent), each sample given to
// the stage of the frame nearest its leaf that belongs to one. A stage
// owns what its frames call: the allocations and garbage-collection assists
// of decoding are decoding's, the appender's cgo calls the append's. What
// runs on no stage's behalf (the collector's background workers, the
// embedded nats-server, the runtime) has stages of its own.
var cpuStages = []struct {
	stage   string
	markers []string // substrings of a frame's function name
}{
	{"validate", []string{"internal/events.(*validator)"}},
	{"decode", []string{"internal/events.", "internal/ingest.classify", "internal/ingest.planTooLarge"}},
	{"dedupe", []string{"internal/store.(*Store).dedupe", "internal/store.(*keySet)", "internal/store.splitFates"}},
	{"append", []string{"internal/store.(*Store).appendEvent", "internal/store.(*Store).appendDead",
		"internal/store.(*appenders)", "duckdb-go/v2.(*Appender)"}},
	{"checkpoint", []string{"internal/store.(*checkpointer)"}},
	{"facts", []string{"internal/store.(*Store).RefreshFacts", "internal/ingest.(*Ingester).refreshFacts"}},
	{"commit", []string{"internal/store.(*Store).commit", "internal/store.(*Store).Write"}},
	{"nats-server", []string{"nats-io/nats-server/"}},
	{"consume", []string{"nats-io/nats.go", "internal/ingest."}},
	{"gc", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	// Samples on threads Go did not start: DuckDB's own (its parallel
	// scans and checkpoints), which the profile cannot tell apart.
	{"duckdb-threads", []string{"runtime._ExternalCode"}},
}

// stageOrder is the order stages print in: the list of the
// ingester's own stages, then what is not the ingester's.
var stageOrder = []string{"consume", "decode", "validate", "dedupe", "append", "commit", "checkpoint", "facts", "duckdb-threads", "gc", "nats-server", "other"}

// notIngester are the stages that are not the ingester's own work: the
// embedded nats-server is a process of its own beyond one machine.
var notIngester = map[string]bool{"nats-server": true}

// stageOf is the stage of a sample's stack, leaf first.
func stageOf(funcs []string) string {
	for _, f := range funcs {
		for _, s := range cpuStages {
			for _, m := range s.markers {
				if strings.Contains(f, m) {
					return s.stage
				}
			}
		}
	}
	return "other"
}

// CPUBreakdown is a phase's CPU an event by stage.
type CPUBreakdown struct {
	// PerEvent is the phase's CPU an event (the process's, from
	// getrusage), in µs; Stages splits it in the profile's proportions.
	PerEvent float64            `json:"cpu_us_per_event"`
	Stages   map[string]float64 `json:"stages_us_per_event"`
	// Sampled is the profile's CPU over the process's: below 1 when
	// threads the Go profiler does not sample (DuckDB's own) did work.
	Sampled float64 `json:"profile_share"`
}

// Ingester is the CPU an event without the stages that are not the
// ingester's own (the embedded nats-server).
func (b CPUBreakdown) Ingester() float64 {
	v := b.PerEvent
	for s := range notIngester {
		v -= b.Stages[s]
	}
	return v
}

// cpuBreakdown splits cpuSeconds over events by the stages of a CPU
// profile (pprof's protobuf, as runtime/pprof writes it).
func cpuBreakdown(prof []byte, cpuSeconds float64, events int64) (CPUBreakdown, error) {
	p, err := profile.Parse(bytes.NewReader(prof))
	if err != nil {
		return CPUBreakdown{}, fmt.Errorf("read the CPU profile: %w", err)
	}
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return CPUBreakdown{}, fmt.Errorf("the profile has no cpu samples (types %v)", p.SampleType)
	}
	byStage := map[string]int64{}
	var total int64
	var funcs []string
	for _, s := range p.Sample {
		funcs = funcs[:0]
		for _, loc := range s.Location {
			// A location's lines are innermost first (inlined calls).
			for _, l := range loc.Line {
				if l.Function != nil {
					funcs = append(funcs, l.Function.Name)
				}
			}
		}
		v := s.Value[vi]
		byStage[stageOf(funcs)] += v
		total += v
	}
	b := CPUBreakdown{Stages: map[string]float64{}}
	if events == 0 || total == 0 {
		return b, nil
	}
	b.PerEvent = 1e6 * cpuSeconds / float64(events)
	for s, v := range byStage {
		b.Stages[s] = b.PerEvent * float64(v) / float64(total)
	}
	if cpuSeconds > 0 {
		// Sample values are nanoseconds of CPU.
		b.Sampled = float64(total) / 1e9 / cpuSeconds
	}
	return b, nil
}

// String is the breakdown on one line, stages in stageOrder.
func (b CPUBreakdown) String() string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range stageOrder {
		seen[s] = true
		if v, ok := b.Stages[s]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f", s, v))
		}
	}
	var rest []string
	for s := range b.Stages {
		if !seen[s] {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	for _, s := range rest {
		parts = append(parts, fmt.Sprintf("%s %.1f", s, b.Stages[s]))
	}
	return strings.Join(parts, ", ")
}

// breakdownOf reads the breakdown a phase recorded in its notes (Extra
// round-trips through JSON between the phase's process and the report).
func breakdownOf(x Result) (CPUBreakdown, bool) {
	m, ok := x.Extra["cpu"].(map[string]any)
	if !ok {
		return CPUBreakdown{}, false
	}
	var b CPUBreakdown
	b.PerEvent, _ = m["cpu_us_per_event"].(float64)
	b.Sampled, _ = m["profile_share"].(float64)
	st, _ := m["stages_us_per_event"].(map[string]any)
	b.Stages = map[string]float64{}
	for k, v := range st {
		if f, ok := v.(float64); ok {
			b.Stages[k] = f
		}
	}
	return b, !math.IsNaN(b.PerEvent) && b.PerEvent > 0
}

// cpuTarget is the bound on the CPU an event of the ingest and
// concurrent phases, in µs.
const cpuTarget = 12.0

// writeCPU prints each phase's CPU an event by stage, against cpuTarget.
func writeCPU(w io.Writer, rs []Result, curve bool) {
	first := true
	for _, x := range rs {
		b, ok := breakdownOf(x)
		if !ok {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nCPU an event, µs, by stage (the phase's CPU profile; target ≤ %.0f µs):\n", cpuTarget)
			first = false
		}
		verdict := "meets it"
		if b.PerEvent > cpuTarget {
			verdict = "ABOVE it"
		}
		label := x.Phase
		if curve {
			label += " at " + thousands(x.Events)
		}
		fmt.Fprintf(w, "  %-24s %.1f µs (%s); %.1f without the embedded nats-server; profile saw %.0f%% of it\n",
			label, b.PerEvent, verdict, b.Ingester(), 100*b.Sampled)
		fmt.Fprintf(w, "  %-24s %s\n", "", b.String())
	}
}
