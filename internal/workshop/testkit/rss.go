package testkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is the peak resident set size, in bytes, of the running process
// pid so far: VmHWM of /proc/<pid>/status (Linux).
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read peak RSS of process %d: %w", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read peak RSS of process %d: VmHWM %q: %w", pid, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read peak RSS of process %d: no VmHWM in its status", pid)
}

// DefaultEnv is the environment of the test without the variables that
// change the Go runtime's memory settings (GOGC, GOMEMLIMIT), so that a
// child process runs at its own defaults.
func DefaultEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GOGC" && k != "GOMEMLIMIT" {
			env = append(env, kv)
		}
	}
	return env
}
