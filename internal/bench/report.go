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

// target is the end-to-end rate the pipeline is meant to reach on two cores
// with acks after commit.
const target = 50_000

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
			keys = append(keys, k)
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

	fmt.Fprintf(w, "\ntarget: ≥ %s events/s end to end on 2 cores with acks after commit\n", thousands(target))
	for _, x := range r.Results {
		if x.Phase != "ingest" && x.Phase != "concurrent" {
			continue
		}
		verdict := "meets the target"
		if x.PerSec < target {
			verdict = fmt.Sprintf("BELOW the target (%.0f%% of it)", 100*x.PerSec/target)
		}
		fmt.Fprintf(w, "  %-10s %s events/s at %s — %s\n", x.Phase, thousands(int64(math.Round(x.PerSec))), thousands(x.Events), verdict)
	}
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
