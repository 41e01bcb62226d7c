package store

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The ingester's memory budget: DuckDB's memory_limit (the buffer pool:
// cached blocks of the database, the data committed since the last
// checkpoint, the working memory of the statements) plus a soft limit on
// the Go heap (the decoded batches, the de-duplication keys, the embedded
// nats-server's buffers); the ingester's RSS is the two together plus what
// neither counts (code, stacks, DuckDB's allocations outside its buffer
// pool, which a facts refresh of a large backlog makes grow most).
//
// A large buffer pool does not make ingestion faster: the ingester writes
// each block once and reads back only the pending sessions' rows, so a
// pool of a quarter of RAM (the earlier default) mostly held cached blocks
// and committed data waiting for a checkpoint. A smaller one does not make
// it slower either, but the pool is also the queries' memory: below this
// default, queries beside a facts refresh (the demo's rule learning) and
// the facts refresh of a large database ran out of it. Under the limit
// DuckDB evicts cached blocks and spills the rest (uncheckpointed data, the
// facts refresh's joins) to the temp directory. On a small machine a
// quarter of its memory is the limit. The figures behind both limits:
// BENCHMARKS.md, "Figures behind the defaults".
const (
	// MaxDefaultMemoryLimit is the largest DefaultMemoryLimit.
	MaxDefaultMemoryLimit = 512 << 20 // 512 MiB
	minMemoryLimit        = 128 << 20 // 128 MiB, however small the machine
	memoryShare           = 4         // at most a quarter of the machine's memory
	// GoMemoryLimit is the Go heap's share of the ingester's budget: the
	// soft limit (runtime/debug.SetMemoryLimit) LimitGoMemory sets. It
	// leaves room above the live heap of a backlog (batches in flight, the
	// pull buffer, the key set, and for ten seconds after a burst of
	// publishing the embedded server's duplicate window): closer to it the
	// collector runs almost without pause and slows the ingester, while a
	// higher limit ingests no faster and only lets the heap grow (the
	// figures: BENCHMARKS.md, "Figures behind the defaults").
	GoMemoryLimit = 512 << 20 // 512 MiB
)

// DefaultMemoryLimit is the memory_limit Open uses unless told otherwise:
// MaxDefaultMemoryLimit, or a quarter of the physical memory or of the cgroup's limit
// where that is smaller (at least 128 MiB), in DuckDB's syntax ("512MiB").
func DefaultMemoryLimit() string {
	return fmt.Sprintf("%dMiB", defaultMemoryBytes(availableMemory())>>20)
}

func defaultMemoryBytes(avail int64) int64 {
	if avail <= 0 {
		return MaxDefaultMemoryLimit
	}
	return min(max(avail/memoryShare, minMemoryLimit), MaxDefaultMemoryLimit)
}

// LimitGoMemory sets the Go runtime's soft memory limit to GoMemoryLimit
// unless the GOMEMLIMIT environment variable sets one, and returns the
// limit in force. The ingester's main calls it: with the limit, the
// garbage collector runs before the heap doubles, where without it the
// heap would grow to twice what is live. Over the limit (a live heap
// larger than it) Go only collects more often; it never fails.
func LimitGoMemory() int64 {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(GoMemoryLimit)
	}
	return debug.SetMemoryLimit(-1)
}

// availableMemory is the smaller of the physical memory (Linux
// /proc/meminfo) and the cgroup v2 or v1 memory limit; 0 when neither
// can be read.
func availableMemory() int64 {
	var avail int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if kb, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(kb, "kB")), 10, 64)
				if err == nil {
					avail = n << 10
				}
				break
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (avail == 0 || n < avail) {
			avail = n // "max" (no limit) does not parse and is skipped
		}
	}
	return avail
}
