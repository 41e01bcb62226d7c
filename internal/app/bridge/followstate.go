package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// followState is what -follow keeps in its -state file: for each input file
// (by its path under -in), how far it was read and how many of its events
// JetStream acknowledged. A restart re-translates each file from its start
// and publishes only the events past Events, so nothing is stored twice.
type followState struct {
	Version int                     `json:"version"`
	Agent   string                  `json:"agent"`
	Files   map[string]followedFile `json:"files"`
}

// followedFile is one file's entry.
type followedFile struct {
	// Offset is the bytes of complete lines handed to the translation.
	Offset int64 `json:"offset"`
	// Head is the SHA-256 of the file's first HeadLen bytes (at most
	// headMax, at most Offset): with Offset, the file's identity. A file
	// shorter than Offset, or whose head differs, was truncated or replaced
	// and is read as a new one.
	Head    string `json:"head"`
	HeadLen int64  `json:"head_len"`
	// Events is how many events the file's lines made that JetStream
	// acknowledged: the first Events of a re-translation are not sent.
	Events int64 `json:"events"`
	// Settled: the events of the lines before Offset are all among Events
	// (the file's translation had ended). A file not settled is read again
	// at a restart even when it did not grow.
	Settled bool `json:"settled"`
}

const followStateVersion = 1

// headMax is how much of a file's start identifies it: a Codex rollout's
// first line names its thread and time.
const headMax = 4096

// loadFollowState reads the state file name; a missing file is an empty
// state.
func loadFollowState(name, agent string) (*followState, error) {
	st := &followState{Version: followStateVersion, Agent: agent, Files: map[string]followedFile{}}
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read -state: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("read -state %s: %w", name, err)
	}
	switch {
	case st.Version != followStateVersion:
		return nil, fmt.Errorf("-state %s is version %d, want %d", name, st.Version, followStateVersion)
	case st.Agent != agent:
		return nil, fmt.Errorf("-state %s is the state of -agent %s, not %s", name, st.Agent, agent)
	}
	if st.Files == nil {
		st.Files = map[string]followedFile{}
	}
	return st, nil
}

// save writes st to name atomically: a temporary file in the same
// directory, synced, renamed over it.
func (st *followState) save(name string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write -state: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("write -state: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write -state %s: %w", name, err)
	}
	return nil
}

// headOf returns the SHA-256 (hex) of the first n bytes of the file name.
func headOf(name string, n int64) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return "", fmt.Errorf("read the head of %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// defaultStatePath is -state when not given: one file per agent, input
// and destination, under $XDG_STATE_HOME (~/.local/state).
func defaultStatePath(agent, in, natsURL, prefix string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no -state given and no home directory for its default: %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	abs, err := filepath.Abs(in)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs + "\x00" + natsURL + "\x00" + prefix))
	return filepath.Join(dir, "evosignal", "bridge-follow", fmt.Sprintf("%s-%x.json", agent, sum[:6])), nil
}
