//go:build unix

package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

const lockName = "_evosignal_export.lock"

// lockDir takes an exclusive lock on dir's lock file for the length of an
// export, so that two exports into one directory cannot remove or duplicate
// each other's files. The lock goes with the process: a crashed export
// leaves no stale lock. The file itself stays.
func lockDir(dir string) (unlock func(), err error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock output directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock output directory %s: %w", dir, ErrBusy)
		}
		return nil, fmt.Errorf("lock output directory %s: %w", dir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
