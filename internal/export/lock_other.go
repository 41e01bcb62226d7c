//go:build !unix

package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const lockName = "_evosignal_export.lock"

// lockDir creates dir's lock file exclusively for the length of an export
// (systems without flock). A crashed export leaves the file behind: remove
// it by hand once no export runs.
func lockDir(dir string) (unlock func(), err error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("lock output directory %s (remove %s if no export runs): %w", dir, lockName, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("lock output directory: %w", err)
	}
	return func() {
		f.Close()
		os.Remove(p)
	}, nil
}
