package bench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Result is one row of the report.
type Result struct {
	Phase       string         `json:"phase"`
	What        string         `json:"what"`
	Events      int64          `json:"events"`
	Seconds     float64        `json:"seconds"`
	PerSec      float64        `json:"events_per_s"`
	MBPerSec    float64        `json:"mb_per_s,omitempty"`
	CPUSeconds  float64        `json:"cpu_seconds"`     // user+sys of the whole process during Seconds
	OtherCPU    float64        `json:"other_cpu_cores"` // cores other processes kept busy meanwhile
	IOWait      float64        `json:"iowait_cores"`    // cores idle waiting for I/O meanwhile
	PeakRSSMiB  float64        `json:"peak_rss_mib"`
	HeapPeakMiB float64        `json:"go_heap_peak_mib"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// span times one measured section in wall and CPU time.
type span struct {
	wall time.Time
	cpu  time.Duration
	busy time.Duration // machine-wide busy CPU time
	wait time.Duration // machine-wide iowait time
}

func startSpan() span {
	busy, wait := machineCPU()
	return span{wall: time.Now(), cpu: cpuTime(), busy: busy, wait: wait}
}

// row fills a result from the span ending at end (zero: now) for events
// events and bytes bytes (0: no MB/s).
func (s span) row(phase, what string, events, bytes int64, end time.Time) Result {
	if end.IsZero() {
		end = time.Now()
	}
	secs := end.Sub(s.wall).Seconds()
	cpu := cpuTime() - s.cpu
	r := Result{Phase: phase, What: what, Events: events, Seconds: secs, CPUSeconds: cpu.Seconds()}
	if secs > 0 {
		// The figures mean little when other processes took the cores: say
		// how much they did.
		busy, wait := machineCPU()
		el := time.Since(s.wall).Seconds()
		r.OtherCPU = max(0, (busy-s.busy-cpu).Seconds()/el)
		r.IOWait = (wait - s.wait).Seconds() / el
		r.PerSec = float64(events) / secs
		if bytes > 0 {
			r.MBPerSec = float64(bytes) / 1e6 / secs
		}
	}
	return r
}

// cpuTime is the user+system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU returns the CPU time all processes have used since boot (every
// state but idle and iowait) and the iowait time, from /proc/stat.
func machineCPU() (busy, iowait time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	const tick = time.Second / 100 // USER_HZ
	for i, v := range f[1:9] {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch i {
		case 3: // idle
		case 4:
			iowait = time.Duration(n) * tick
		default:
			busy += time.Duration(n) * tick
		}
	}
	return busy, iowait
}

// procStatus returns a field of /proc/self/status in bytes (VmHWM, VmRSS), 0
// if it cannot be read.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest) // "123456 kB"
		if len(f) == 0 {
			return 0
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		return kb << 10
	}
	return 0
}

// resetPeakRSS asks the kernel to restart VmHWM from the current RSS (used
// when phases share one process).
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// goMapped is the memory the Go runtime holds from the OS (everything
// the Go memory limit counts): heap, stacks, runtime structures, less
// what it has returned.
func goMapped() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// heapNow is the bytes of the Go heap occupied by objects, live or not yet
// swept.
func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// heapSampler tracks the Go heap's peak by sampling it every 20ms.
type heapSampler struct {
	mu   sync.Mutex
	peak uint64
	stop context.CancelFunc
	done chan struct{}
}

func startHeapSampler(ctx context.Context) *heapSampler {
	ctx, cancel := context.WithCancel(ctx)
	h := &heapSampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			h.sample()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	v := heapNow()
	h.mu.Lock()
	h.peak = max(h.peak, v)
	h.mu.Unlock()
}

// Close stops sampling and returns the peak seen.
func (h *heapSampler) Close() uint64 {
	h.stop()
	<-h.done
	h.sample()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

// heapLive is the live heap after a full collection.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
