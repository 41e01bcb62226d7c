package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Files written by WriteDir.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
	JSONFile     = "report.json"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteDir writes report.html, report.md and report.json into dir (created
// if missing). Each file is written beside its target and renamed over it,
// so that a reader — a web server, a cron mail — never sees half a report.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer, *Report) error
	}{{JSONFile, WriteJSON}, {MarkdownFile, WriteMarkdown}, {HTMLFile, WriteHTML}} {
		if err := writeAtomic(filepath.Join(dir, f.name), func(w io.Writer) error { return f.write(w, r) }); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := errors.Join(tmp.Chmod(0o644), tmp.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
