package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
)

// The targets a run is judged against (issue "the write path, not the
// Appender, sets the bound", which follows "Ingest at the hardware's
// pace"): rates as shares of limits measured in the same run (js-consume,
// js-both and the raw parts' bound at the same N), so that a faster or
// slower machine does not move them; the publisher in events/s; memory in
// MiB and bytes; the longest commit in ms.
const (
	ingestShare    = 0.50    // ingest (backlog) ≥ 0.5 × js-consume
	boundShare     = 0.85    // ingest ≥ 0.85 × the raw parts' bound
	bothShare      = 0.80    // concurrent ≥ 0.8 × js-both
	publishTarget  = 100_000 // publish ≥ 100,000 events/s
	rssTargetMiB   = 1024    // ingest, concurrent, export: peak RSS ≤ 1 GiB
	keyBytesTarget = 10.0    // dedup-open: ≤ 10 bytes a key
	commitTargetMs = 150.0   // ingest, concurrent: the longest COMMIT ≤ 150 ms
)

// Report is what a run prints: the machine and a row per phase.
type Report struct {
	Machine machine  `json:"machine"`
	Command string   `json:"command"`
	Events  int      `json:"events"`
	Mode    string   `json:"mode"`
	Sizes   []int    `json:"sizes,omitempty"` // a curve run's N, in order (Events is the first)
	Results []Result `json:"results"`
	Curve   []Point  `json:"curve,omitempty"`
}

type machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model"`
	MemGiB    float64 `json:"mem_gib"`
	GoVersion string  `json:"go_version"`
	OS        string  `json:"os"`
}

func machineInfo() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if f := strings.Fields(procField("/proc/meminfo", "MemTotal")); len(f) > 0 {
		var kb float64
		fmt.Sscan(f[0], &kb)
		m.MemGiB = round(kb/(1<<20), 1)
	}
	return m
}

// procField returns the value of the first "name: value" line of a /proc
// file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (r Report) write(w io.Writer) {
	m := r.Machine
	events := fmt.Sprint(r.Events)
	if len(r.Sizes) > 0 {
		events = fmt.Sprint(r.Sizes)
	}
	fmt.Fprintf(w, "evosignal bench: %s events, mode %s — %d CPUs (%s), %.1f GiB RAM, %s %s\n\n",
		events, r.Mode, m.CPUs, m.CPUModel, m.MemGiB, m.GoVersion, m.OS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tevents\tseconds\tevents/s\tMB/s\tCPU\tothers\tiowait\tpeak RSS MiB\tGo heap MiB\t  what")
	for _, x := range r.Results {
		mb, cpu := "-", "-"
		if x.MBPerSec > 0 {
			mb = fmt.Sprintf("%.1f", x.MBPerSec)
		}
		if x.CPUSeconds > 0 && x.Seconds > 0 {
			cpu = fmt.Sprintf("%.2f", x.CPUSeconds/x.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%s\t%.2f\t%.2f\t%.0f\t%.0f\t  %s\n", x.Phase, x.Events, x.Seconds,
			thousands(int64(math.Round(x.PerSec))), mb, cpu, x.OtherCPU, x.IOWait, x.PeakRSSMiB, x.HeapPeakMiB, x.What)
	}
	tw.Flush()
	busy := 0.0
	for _, x := range r.Results {
		busy = max(busy, x.OtherCPU)
	}
	if busy >= 0.1 {
		fmt.Fprintf(w, "\nWARNING: other processes kept up to %.2f cores busy during a phase (column others):\n"+
			"those figures understate the pipeline; run again on an idle machine.\n", busy)
	}

	fmt.Fprintln(w, "\nnotes:")
	for _, x := range r.Results {
		if len(x.Extra) == 0 {
			continue
		}
		keys := make([]string, 0, len(x.Extra))
		for k := range x.Extra {
			if k != "cpu" { // printed on its own (writeCPU)
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			v := x.Extra[k]
			if f, ok := v.(float64); ok {
				if f == math.Trunc(f) && math.Abs(f) < 1e15 {
					v = int64(f)
				} else {
					v = round(f, 3)
				}
			}
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
		label := x.Phase
		if len(r.Sizes) > 0 {
			label += fmt.Sprintf(" (%s)", thousands(x.Events))
		}
		fmt.Fprintf(w, "  %-14s %s\n", label, strings.Join(parts, " "))
	}

	writeCPU(w, r.Results, len(r.Sizes) > 0)
	writeTargets(w, r.Results)
	writeCurve(w, r.Curve)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}

// perEvent is a phase's CPU seconds an event (a row, for duckdb-append).
func perEvent(x Result) float64 {
	if x.Events == 0 {
		return 0
	}
	return x.CPUSeconds / float64(x.Events)
}

// writeTargets prints each target the results can be judged against, with
// the figure, the limit it is a share of (from the same run) and the verdict.
func writeTargets(w io.Writer, rs []Result) {
	consume := map[int64]float64{} // js-consume rate by N
	both := map[int64]float64{}    // js-both rate by N
	// CPU seconds an event of js-consume, a row of duckdb-append, by N
	consumeCPU, appendCPU := map[int64]float64{}, map[int64]float64{}
	for _, x := range rs {
		switch x.Phase {
		case "js-consume":
			consume[x.Events] = x.PerSec
			consumeCPU[x.Events] = perEvent(x)
		case "js-both":
			both[x.Events] = x.PerSec
		case "duckdb-append":
			appendCPU[x.Events] = perEvent(x)
		}
	}
	var lines []string
	verdict := func(ok bool) string {
		if ok {
			return "meets it"
		}
		return "BELOW it"
	}
	for _, x := range rs {
		if share := ingestShare; x.Phase == "ingest" {
			if c := consume[x.Events]; c > 0 {
				lines = append(lines, fmt.Sprintf("%-10s at %s: %s events/s = %.2f× js-consume (%s/s); target ≥ %.2f×: %s",
					x.Phase, thousands(x.Events), thousands(int64(math.Round(x.PerSec))), x.PerSec/c,
					thousands(int64(math.Round(c))), share, verdict(x.PerSec >= share*c)))
			} else {
				lines = append(lines, fmt.Sprintf("%-10s at %s: %s events/s; target ≥ %.2f× js-consume, which this run did not measure at %s",
					x.Phase, thousands(x.Events), thousands(int64(math.Round(x.PerSec))), share, thousands(x.Events)))
			}
		}
		// What the raw parts allow (the target is a share of it). An ingester
		// that only consumed each event and appended its rows would
		// spend js-consume's CPU an event and duckdb-append's a row; on
		// all of the machine's cores that is its bound.
		if r, ok := x.Extra["rows_per_event"].(float64); ok && x.Phase == "ingest" && consumeCPU[x.Events] > 0 && appendCPU[x.Events] > 0 {
			perEv := consumeCPU[x.Events] + r*appendCPU[x.Events]
			bound := float64(runtime.NumCPU()) / perEv
			line := fmt.Sprintf("%-10s at %s: the raw parts' bound is %s events/s (%d cores / (js-consume's %.1f µs + %.2f rows × duckdb-append's %.1f µs of CPU))",
				x.Phase, thousands(x.Events), thousands(int64(math.Round(bound))), runtime.NumCPU(),
				1e6*consumeCPU[x.Events], r, 1e6*appendCPU[x.Events])
			if c := consume[x.Events]; c > 0 {
				line += fmt.Sprintf(" = %.2f× js-consume", bound/c)
			}
			lines = append(lines, line+fmt.Sprintf("; ingest reached %.2f× of it; target ≥ %.2f×: %s",
				x.PerSec/bound, boundShare, verdict(x.PerSec >= boundShare*bound)))
		}
		// Raw JetStream publishing and consuming together is the most
		// the concurrent phase could reach.
		if b := both[x.Events]; x.Phase == "concurrent" && b > 0 {
			lines = append(lines, fmt.Sprintf("%-10s at %s: %s events/s = %.2f× js-both (%s/s: raw publish and consume together); target ≥ %.2f×: %s",
				x.Phase, thousands(x.Events), thousands(int64(math.Round(x.PerSec))), x.PerSec/b, thousands(int64(math.Round(b))),
				bothShare, verdict(x.PerSec >= bothShare*b)))
		}
		if ms, ok := x.Extra["commit_max_ms"].(float64); ok && (x.Phase == "ingest" || x.Phase == "concurrent") {
			lines = append(lines, fmt.Sprintf("%-10s at %s: longest COMMIT %.0f ms; target ≤ %.0f ms: %s",
				x.Phase, thousands(x.Events), ms, commitTargetMs, verdict(ms <= commitTargetMs)))
		}
		if x.Phase == "publish" {
			lines = append(lines, fmt.Sprintf("%-10s at %s: %s events/s; target ≥ %s: %s",
				x.Phase, thousands(x.Events), thousands(int64(math.Round(x.PerSec))), thousands(publishTarget), verdict(x.PerSec >= publishTarget)))
		}
		switch x.Phase {
		case "ingest", "concurrent", "export":
			lines = append(lines, fmt.Sprintf("%-10s at %s: peak RSS %.0f MiB; target ≤ %d MiB: %s",
				x.Phase, thousands(x.Events), x.PeakRSSMiB, rssTargetMiB, verdict(x.PeakRSSMiB <= rssTargetMiB)))
		case "dedup-open":
			if b, ok := x.Extra["set_bytes_per_key"].(float64); ok {
				lines = append(lines, fmt.Sprintf("%-10s at %s: %.2f bytes a key (the set's own size); target ≤ %.0f: %s",
					x.Phase, thousands(x.Events), b, keyBytesTarget, verdict(b <= keyBytesTarget)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\ntargets (limits from this run):\n")
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}
