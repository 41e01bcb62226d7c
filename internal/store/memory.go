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
// nats-server's buffers), 1.15-1.65 GiB of RSS together with what
// neither counts (code, stacks, DuckDB's allocations outside its buffer
// pool, which a facts refresh of a large backlog makes grow most).
//
// A large buffer pool does not make ingestion faster: the ingester writes
// each block once and reads back only the pending sessions' rows, so a
// pool of a quarter of RAM (the earlier default) mostly held cached blocks
// and committed data waiting for a checkpoint, and peaked at 4.4 GiB at 10M
// events. A smaller one does not make it slower either (320 and 256 MiB
// ingested at the rate of 512), but the pool is also the queries' memory:
// at 384 MiB the demo's rule learning, beside a facts refresh, ran out of
// it on a database of 5,000 events (their hash tables took 350 MiB), and
// at 256 MiB the facts refresh of a 10M-event database did (BENCHMARKS.md).
// Under the limit DuckDB evicts cached blocks and spills the rest
// (uncheckpointed data, the facts refresh's joins) to the temp directory.
// On a small machine a quarter of its memory is the limit.
const (
	// MaxDefaultMemoryLimit is the largest DefaultMemoryLimit.
	MaxDefaultMemoryLimit = 512 << 20 // 512 MiB
	minMemoryLimit        = 128 << 20 // 128 MiB, however small the machine
	memoryShare           = 4         // at most a quarter of the machine's memory
	// GoMemoryLimit is the Go heap's share of the ingester's budget: the
	// soft limit (runtime/debug.SetMemoryLimit) LimitGoMemory sets. The
	// live heap while ingesting a backlog is 150-300 MiB (batches in
	// flight, the pull buffer, the key set, and for ten seconds after a
	// burst of publishing the embedded server's duplicate window): at
	// 384 MiB the collector ran almost without pause and took a third of
	// the CPU (ingest 71k events/s at 1M); at 512 MiB it ingested at the
	// rate of 640 MiB (109k and 111k at 1M), at 448 MiB 10 % slower than
	// at 512 (91k and 102k at 3M; BENCHMARKS.md).
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
