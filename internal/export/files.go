package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// filePrefix is the start of the names of run's files; DuckDB adds a UUID
// and .parquet.
func filePrefix(run int64) string { return fmt.Sprintf("part-%06d-", run) }

// dataFile matches the files the export writes, with the run number.
var dataFile = regexp.MustCompile(`^part-([0-9]+)-[0-9a-fA-F-]+\.parquet$`)

// partition matches the day folders.
var partition = regexp.MustCompile(`^day=[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// runOf returns the run number of an export file name, false for any other
// name.
func runOf(name string) (int64, bool) {
	m := dataFile.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// eachFile calls fn with the path and run of every export file under dir's
// table folders, and returns the day folders it visited.
func eachFile(dir string, fn func(path string, run int64) error) (days []string, err error) {
	for _, t := range Tables {
		tdir := filepath.Join(dir, t.Name)
		ents, err := os.ReadDir(tdir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tdir, err)
		}
		for _, d := range ents {
			if !d.IsDir() || !partition.MatchString(d.Name()) {
				continue
			}
			ddir := filepath.Join(tdir, d.Name())
			days = append(days, ddir)
			files, err := os.ReadDir(ddir)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", ddir, err)
			}
			for _, f := range files {
				if run, ok := runOf(f.Name()); ok && f.Type().IsRegular() {
					if err := fn(filepath.Join(ddir, f.Name()), run); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return days, nil
}

// stagingName is the folder under the output directory where a run writes
// its files before it moves them into the table folders.
const stagingName = "_evosignal_staging"

// stagingDir is where run writes its files: stage/<table>/day=…/.
func stagingDir(dir string, run int64) string {
	return filepath.Join(dir, stagingName, fmt.Sprintf("run-%06d", run))
}

// removeStaging removes the staging folder and what an interrupted run left
// in it.
func removeStaging(dir string) error {
	if err := os.RemoveAll(filepath.Join(dir, stagingName)); err != nil {
		return fmt.Errorf("remove the staging folder: %w", err)
	}
	return nil
}

// moveIntoPlace moves the staged files of a run (under stage/<table>/<day>/)
// into the table folders of dir, makes them durable, and removes the
// staging folder.
func moveIntoPlace(dir, stage string, staged []string) error {
	var moved []string
	tables := map[string]bool{}
	for _, p := range staged {
		rel, err := filepath.Rel(stage, p)
		if err != nil {
			return fmt.Errorf("move %s into place: %w", p, err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("move %s into place: %w", rel, err)
		}
		if err := os.Rename(p, dst); err != nil {
			return fmt.Errorf("move %s into place: %w", rel, err)
		}
		moved = append(moved, dst)
		tables[filepath.Join(dir, strings.SplitN(rel, string(filepath.Separator), 2)[0])] = true
	}
	for tdir := range tables {
		var files []string
		for _, p := range moved {
			if strings.HasPrefix(p, tdir+string(filepath.Separator)) {
				files = append(files, p)
			}
		}
		if err := syncFiles(tdir, files); err != nil {
			return err
		}
	}
	if len(moved) > 0 {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return removeStaging(dir)
}

// removeUncommitted removes the staging folder, the files of runs after
// the committed run (interrupted exports), the folders they leave empty,
// and a stale temporary manifest. It returns how many files it removed
// from the table folders.
func removeUncommitted(dir string, committed int64) (int, error) {
	if err := removeStaging(dir); err != nil {
		return 0, fmt.Errorf("remove files of interrupted exports: %w", err)
	}
	n, err := removeFiles(dir, func(run int64) bool { return run > committed })
	if err != nil {
		return n, fmt.Errorf("remove files of interrupted exports: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, manifestName+tmpSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n, fmt.Errorf("remove files of interrupted exports: %w", err)
	}
	return n, nil
}

// removeRun removes the files of run after it failed.
func removeRun(dir string, run int64) error {
	if _, err := removeFiles(dir, func(r int64) bool { return r == run }); err != nil {
		return fmt.Errorf("remove files of the failed run %d (the next export removes them): %w", run, err)
	}
	return nil
}

func removeFiles(dir string, match func(run int64) bool) (int, error) {
	n := 0
	days, err := eachFile(dir, func(p string, run int64) error {
		if !match(run) {
			return nil
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, err
	}
	if n == 0 {
		return 0, nil
	}
	// Folders emptied: a day folder, then a table folder. os.Remove removes
	// only empty directories, so others stay.
	for _, d := range days {
		os.Remove(d)
	}
	for _, t := range Tables {
		os.Remove(filepath.Join(dir, t.Name))
	}
	return n, syncDir(dir)
}

// runFiles lists the files of run under one table folder. It reads the
// folders rather than globbing, so that the output path may hold any
// character.
func runFiles(tdir string, run int64) ([]string, error) {
	days, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range days {
		if !d.IsDir() || !partition.MatchString(d.Name()) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(tdir, d.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if r, ok := runOf(f.Name()); ok && r == run && f.Type().IsRegular() {
				out = append(out, filepath.Join(tdir, d.Name(), f.Name()))
			}
		}
	}
	return out, nil
}

// syncFiles makes the files and their folders durable before the manifest
// names them committed.
func syncFiles(tdir string, files []string) error {
	dirs := map[string]bool{}
	for _, p := range files {
		if err := syncPath(p); err != nil {
			return err
		}
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		return syncDir(tdir)
	}
	return nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", p, err)
	}
	return nil
}

// syncDir syncs a directory's entries. Some systems cannot sync a
// directory; that is not an error there.
func syncDir(d string) error {
	f, err := os.Open(d)
	if err != nil {
		return fmt.Errorf("sync %s: %w", d, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync %s: %w", d, err)
	}
	return nil
}
