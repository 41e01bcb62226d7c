package store

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The default memory limit: a quarter of the memory the process may use,
// within these bounds. DuckDB's own default, 80 % of physical RAM, leaves
// nothing for the agents, NATS and the Go heap (the de-duplication keys)
// beside it, and one query can take all of it. A quarter keeps the batches
// and the facts refresh of large databases in memory (BENCHMARKS.md: peaks
// of 1–4.4 GiB), and what does not fit spills to the temp directory.
const (
	memoryShare    = 4         // a quarter
	minMemoryLimit = 512 << 20 // 512 MiB
	maxMemoryLimit = 8 << 30   // 8 GiB
	fallbackMemory = 2 << 30   // when the machine's memory cannot be read
)

// DefaultMemoryLimit is the memory_limit Open uses unless told otherwise:
// a quarter of the physical memory or of the cgroup's limit, whichever is
// smaller, at least 512 MiB and at most 8 GiB (2 GiB where neither can be
// read), in DuckDB's syntax ("5888MiB").
func DefaultMemoryLimit() string {
	return fmt.Sprintf("%dMiB", defaultMemoryBytes(availableMemory())>>20)
}

func defaultMemoryBytes(avail int64) int64 {
	if avail <= 0 {
		return fallbackMemory
	}
	return min(max(avail/memoryShare, minMemoryLimit), maxMemoryLimit)
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
