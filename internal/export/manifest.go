package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

const (
	manifestName = "_evosignal_export.json"
	tmpSuffix    = ".tmp"

	// ManifestFormat and ManifestVersion identify the manifest and the
	// layout it describes; a breaking change of either is a new version.
	ManifestFormat  = "evosignal-export"
	ManifestVersion = 1
)

// Manifest is the state of an export directory, in _evosignal_export.json.
// The leading underscore keeps it out of the datasets Spark, pyarrow and
// DuckDB globs read.
type Manifest struct {
	Format    string    `json:"format"`  // ManifestFormat
	Version   int       `json:"version"` // ManifestVersion
	Run       int64     `json:"run"`     // the last committed run: files part-<n>-… with n ≤ Run are committed
	UpdatedAt time.Time `json:"updated_at"`
	// Since is the -since the directory was started with: rows committed at
	// or before it are not exported. Nil when none.
	Since  *time.Time            `json:"since,omitempty"`
	Tables map[string]TableState `json:"tables"`
}

// TableState is what a table's folder holds.
type TableState struct {
	Clock string `json:"clock"` // the commit time the mark follows: events.ingested_at or dead_letters.received_at
	// Mark is the high-water mark: every row committed at or before it (and
	// after Since) is exported. Nil when nothing was exported yet.
	Mark  *time.Time `json:"mark"`
	Rows  int64      `json:"rows"`  // rows exported by all runs
	Files int64      `json:"files"` // files written by all runs
}

func newManifest() *Manifest {
	m := &Manifest{Format: ManifestFormat, Version: ManifestVersion, Tables: map[string]TableState{}}
	for _, t := range Tables {
		m.Tables[t.Name] = TableState{Clock: t.Clock}
	}
	return m
}

// readManifest reads dir's manifest; found is false (and m a new one) when
// there is none.
func readManifest(dir string) (m *Manifest, found bool, err error) {
	p := filepath.Join(dir, manifestName)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return newManifest(), false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read manifest: %w", err)
	}
	m = newManifest()
	if err := json.Unmarshal(b, m); err != nil {
		return nil, false, fmt.Errorf("%s: %w: %v", p, ErrManifest, err)
	}
	if m.Format != ManifestFormat || m.Version != ManifestVersion {
		return nil, false, fmt.Errorf("%s: %w: format %q version %d, this export writes %q version %d",
			p, ErrManifest, m.Format, m.Version, ManifestFormat, ManifestVersion)
	}
	if m.Run < 0 {
		return nil, false, fmt.Errorf("%s: %w: run %d", p, ErrManifest, m.Run)
	}
	for _, t := range Tables {
		st := m.Tables[t.Name]
		if st.Clock == "" {
			st.Clock = t.Clock // a table this manifest does not know yet: nothing exported
		}
		if st.Clock != t.Clock {
			return nil, false, fmt.Errorf("%s: %w: table %s follows clock %q, want %q", p, ErrManifest, t.Name, st.Clock, t.Clock)
		}
		m.Tables[t.Name] = st
	}
	return m, true, nil
}

// writeManifest replaces dir's manifest atomically: a synced temporary file
// renamed over it, then the directory synced. An error of that last sync
// comes as errSyncDir: the new manifest is then in place (the run is
// committed), only not yet known durable.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	b = append(b, '\n')
	p := filepath.Join(dir, manifestName)
	tmp := p + tmpSuffix
	if err := writeSynced(tmp, b); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write manifest: %w: %w", errSyncDir, err)
	}
	return nil
}

// errSyncDir: see writeManifest.
var errSyncDir = errors.New("manifest written, directory not synced")

func writeSynced(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (m *Manifest) clone() *Manifest {
	c := *m
	c.Tables = make(map[string]TableState, len(m.Tables))
	for k, v := range m.Tables {
		c.Tables[k] = v
	}
	return &c
}

// applySince checks -since against the exports already made and records
// it when it starts the directory (started true).
func (m *Manifest) applySince(since time.Time) (started bool, err error) {
	if since.IsZero() {
		return false, nil
	}
	since = since.UTC()
	var last *time.Time
	for _, st := range m.Tables {
		if st.Mark != nil && (last == nil || st.Mark.After(*last)) {
			last = st.Mark
		}
	}
	if last == nil {
		m.Since = &since // nothing exported yet: -since starts the directory
		return true, nil
	}
	if m.Since != nil && since.Before(*m.Since) {
		return false, fmt.Errorf("%w: the export starts at %s and cannot reach back to %s (export into a new directory)",
			ErrSince, m.Since.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano))
	}
	for name, st := range m.Tables {
		if st.Mark != nil && since.After(*st.Mark) {
			return false, fmt.Errorf("%w: %s is exported up to %s; -since %s would leave a gap (leave -since out to continue)",
				ErrSince, name, st.Mark.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano))
		}
	}
	return false, nil // within what is exported: continue from the marks
}

// window returns the commit times of t to export now, (after, upto], and
// false when there is nothing new.
func (m *Manifest) window(t Table, now marks) (after, upto time.Time, ok bool) {
	upto, ok = now[t.Clock]
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	if st := m.Tables[t.Name]; st.Mark != nil {
		after = *st.Mark
	}
	if m.Since != nil && m.Since.After(after) {
		after = *m.Since
	}
	if !after.IsZero() && !upto.After(after) {
		return time.Time{}, time.Time{}, false
	}
	return after, upto, true
}

// advance records that t is exported up to upto.
func (m *Manifest) advance(t Table, upto time.Time, rows int64, files int) {
	st := m.Tables[t.Name]
	u := upto.UTC()
	st.Mark = &u
	st.Rows += rows
	st.Files += int64(files)
	m.Tables[t.Name] = st
}
