package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/output"
)

// -follow: the input files are polled, not watched through fsnotify: a
// walk and a stat per file every -poll is cheap at the size of an agent's
// session directory, needs no dependency, sees new subdirectories (Codex
// makes one a day) without adding watches, and works where file events do
// not (network filesystems, bind mounts, WSL).
const (
	// idleAfter: a file that did not grow for this long has its translation
	// ended; when it grows again it is translated again from its start and
	// the events already sent are skipped.
	idleAfter = time.Minute
	// maxLive bounds the translations running at once (each holds a read
	// buffer); the file idle longest is ended first.
	maxLive = 64
	// statsEvery is how often the counts are logged.
	statsEvery = time.Minute
)

// follower bridges what is appended to an adapter's input files, live, to
// out: one translation per file, fed the file's complete lines through a
// pipe as they are appended. It owns the goroutine of each translation.
type follower struct {
	agent     string
	root      string                                                             // -in: a directory, or one file
	list      func() ([]string, error)                                           // the input files now
	open      func(ctx context.Context, log *slog.Logger) (adapter.Start, error) // the adapter's Open
	out       *output.Output
	log       *slog.Logger
	stateFile string
	poll      time.Duration

	readCtx context.Context // the translations': cancelled only when shutdown stops waiting

	files map[string]*tailed      // by path; the poll loop's
	prior map[string]followedFile // the loaded state of the files not seen yet, by key
	saved []byte                  // the state last written
	ended adapter.Counts          // of the translations ended

	mu        sync.Mutex // serialises every file's sends, and Deliver against them
	published int64      // events sent this run
	skipped   int64      // events not sent again: sent before (this run or the last)
}

// tailed is one followed file. Only the poll loop touches it, but for sent,
// which its translation's sink counts under follower.mu.
type tailed struct {
	path, key string
	fi        os.FileInfo // at the last look, to tell a replaced file
	offset    int64       // bytes of complete lines handed to a translation
	head      string      // SHA-256 of the first headLen bytes
	headLen   int64
	sent      int64 // events of the file sent, before this run too (under follower.mu)
	settled   bool  // no translation runs, and sent are the events of the lines before offset
	broken    bool  // its translation failed: not read again until a restart
	grew      time.Time

	// while its translation runs
	tr   adapter.Translation
	pw   *io.PipeWriter
	done chan error // the translation's Read returned
}

// fileSink is the sink of one file's translation: it skips the events sent
// before (the translation starts at the file's start), and sends the rest,
// one file at a time.
type fileSink struct {
	f          *follower
	t          *tailed
	skip, seen int64
}

var _ agent.Sink = (*fileSink)(nil)

func (s *fileSink) Send(ctx context.Context, e *events.Event) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.seen < s.skip {
		s.seen++
		s.f.skipped++
		return nil
	}
	if err := s.f.out.Send(ctx, e); err != nil {
		return err
	}
	s.t.sent++
	s.f.published++
	return nil
}

// run follows until ctx is done or the events cannot be delivered, then
// ends every translation (without Close: see the -follow help), delivers
// what was sent and saves the state.
func (f *follower) run(ctx context.Context) error {
	st, err := loadFollowState(f.stateFile, f.agent)
	if err != nil {
		return err
	}
	f.prior, f.files = st.Files, map[string]*tailed{}
	// The translations' sends outlive ctx, to deliver what was read, but
	// give up CloseTimeout after it is done (one blocked on a publisher
	// that cannot deliver, say).
	readCtx, cancelRead := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRead()
	f.readCtx = readCtx
	giveUp := time.AfterFunc(time.Duration(math.MaxInt64), cancelRead)
	defer giveUp.Stop()
	defer context.AfterFunc(ctx, func() { giveUp.Reset(output.CloseTimeout) })()
	f.log.Info("following", "in", f.root, "state", f.stateFile, "poll", f.poll)
	ticker := time.NewTicker(f.poll)
	defer ticker.Stop()
	nextStats := time.Now().Add(statsEvery)
	for err == nil && ctx.Err() == nil {
		f.tick(ctx)
		err = f.checkpoint(ctx)
		if now := time.Now(); now.After(nextStats) {
			f.logStats("following")
			nextStats = now.Add(statsEvery)
		}
		if err == nil {
			select {
			case <-ctx.Done():
			case <-ticker.C:
			}
		}
	}
	// Stop intake: end every translation once it has read what it was
	// handed; then deliver, and save the state.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), output.CloseTimeout)
	defer cancel()
	for _, t := range f.files {
		if serr := f.stop(t); serr != nil {
			f.log.Warn("translation ended with an error", "file", t.path, "err", serr)
		}
	}
	err = errors.Join(err, f.checkpoint(final))
	f.logStats("stopped")
	return err
}

// tick looks at every input file once: picks up new ones, hands each its
// appended complete lines, lets go of those gone and those idle.
func (f *follower) tick(ctx context.Context) {
	paths, err := f.list()
	if err != nil {
		f.log.Warn("list the input files", "err", err)
		return
	}
	now := time.Now()
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		seen[p] = true
		t := f.files[p]
		if t == nil {
			t = f.adopt(p)
			f.files[p] = t
		}
		if t.broken {
			continue
		}
		if err := f.advance(ctx, t, now); err != nil {
			f.log.Warn("read input file", "file", p, "err", err)
		}
	}
	f.prior = nil // a file of the last run not listed now is gone
	for p, t := range f.files {
		if !seen[p] {
			f.log.Info("file gone: no longer followed", "file", p)
			f.end(t)
			delete(f.files, p)
		}
	}
	for _, t := range f.live() {
		if now.Sub(t.grew) >= idleAfter {
			f.log.Debug("file idle: translation ended until it grows", "file", t.path)
			f.end(t)
		}
	}
}

// live returns the files whose translation runs, the one grown longest ago
// first.
func (f *follower) live() []*tailed {
	var live []*tailed
	for _, t := range f.files {
		if t.pw != nil {
			live = append(live, t)
		}
	}
	slices.SortFunc(live, func(a, b *tailed) int { return a.grew.Compare(b.grew) })
	return live
}

// adopt starts following path, where the last run left it if the state
// has it and it is still the same file.
func (f *follower) adopt(path string) *tailed {
	key, err := filepath.Rel(f.root, path)
	if err != nil || key == "." {
		key = filepath.Base(path)
	}
	t := &tailed{path: path, key: key, settled: true}
	e, ok := f.prior[key]
	delete(f.prior, key)
	if !ok {
		f.log.Info("new file", "file", path)
		return t
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Size() >= e.Offset {
		var head string
		if head, err = headOf(path, e.HeadLen); err == nil && head == e.Head {
			t.offset, t.head, t.headLen, t.sent, t.settled = e.Offset, e.Head, e.HeadLen, e.Events, e.Settled
			f.log.Info("file resumed", "file", path, "offset", e.Offset, "events", e.Events)
			return t
		}
	}
	f.log.Warn("file truncated or replaced since the last run: read from its start", "file", path)
	return t
}

// advance hands t's translation the complete lines appended since the last
// look, starting the translation (from the file's start) if none runs.
func (f *follower) advance(ctx context.Context, t *tailed, now time.Time) error {
	file, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	if t.fi != nil && !os.SameFile(t.fi, fi) || fi.Size() < t.offset {
		f.log.Warn("file truncated or replaced: read from its start", "file", t.path)
		f.end(t)
		f.mu.Lock()
		*t = tailed{path: t.path, key: t.key, settled: true}
		f.mu.Unlock()
	}
	t.fi = fi
	nl, err := lastNewline(file, t.offset, fi.Size())
	if err != nil {
		return err
	}
	want := max(t.offset, nl+1)
	if want == t.offset && (t.settled || t.pw != nil) {
		return nil // nothing complete appended (a partial last line waits)
	}
	from := t.offset
	if t.pw == nil {
		if live := f.live(); len(live) >= maxLive {
			f.end(live[0]) // it was handed all its lines
		}
		if err := f.begin(ctx, t); err != nil {
			t.broken = true
			return err
		}
		from = 0
	}
	if _, err := io.Copy(t.pw, io.NewSectionReader(file, from, want-from)); err != nil {
		// the translation stopped reading: it failed
		t.broken = true
		return fmt.Errorf("translation failed, file no longer followed until a restart: %w", errors.Join(err, f.stop(t)))
	}
	t.offset, t.settled, t.grew = want, false, now
	if t.headLen < headMax && t.headLen < t.offset {
		n := min(t.offset, headMax)
		if t.head, err = headOf(t.path, n); err != nil {
			return err
		}
		t.headLen = n
	}
	return nil
}

// lastNewline returns the offset of the last '\n' of f in [from, size), or
// -1.
func lastNewline(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > from; {
		start := max(from, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return -1, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}

// begin starts t's translation, to read the file from its start: the
// adapter is opened for it (its warnings name the file) and its sink skips
// the events already sent.
func (f *follower) begin(ctx context.Context, t *tailed) error {
	start, err := f.open(ctx, f.log.With("file", t.path))
	if err != nil {
		return err
	}
	f.mu.Lock()
	sink := &fileSink{f: f, t: t, skip: t.sent}
	f.mu.Unlock()
	tr, err := start(sink)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := tr.Read(f.readCtx, pr)
		pr.CloseWithError(err) // a write after a failed Read fails, not blocks
		done <- err
	}()
	t.tr, t.pw, t.done = tr, pw, done
	return nil
}

// stop ends t's translation, if one runs, once it has read what it was
// handed, and returns its error. Close is not called: the file has not
// ended, and what a translation emits at the end of its input would differ
// from what a later, longer read of the file emits.
func (f *follower) stop(t *tailed) error {
	if t.pw == nil {
		return nil
	}
	t.pw.Close()
	err := <-t.done
	c := t.tr.Counts()
	f.ended.Records += c.Records
	f.ended.Malformed += c.Malformed
	t.tr, t.pw, t.done = nil, nil, nil
	t.settled = true
	return err
}

// end is stop where the error only needs saying.
func (f *follower) end(t *tailed) {
	if err := f.stop(t); err != nil {
		t.broken = true
		f.log.Warn("translation failed, file no longer followed until a restart", "file", t.path, "err", err)
	}
}

// checkpoint waits until every event sent so far is delivered, then saves
// what the files' events are up to. Sends wait meanwhile, so that the
// counts saved are counts delivered.
func (f *follower) checkpoint(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), output.CloseTimeout)
	defer cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.out.Deliver(ctx); err != nil {
		return fmt.Errorf("%w (-state %s keeps what was delivered before; a restart sends the rest again)", err, f.stateFile)
	}
	st := followState{Version: followStateVersion, Agent: f.agent, Files: map[string]followedFile{}}
	for _, t := range f.files {
		if t.offset > 0 || t.sent > 0 {
			st.Files[t.key] = followedFile{Offset: t.offset, Head: t.head, HeadLen: t.headLen, Events: t.sent, Settled: t.settled}
		}
	}
	for key, e := range f.prior { // not listed this time round (yet)
		st.Files[key] = e
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if bytes.Equal(b, f.saved) {
		return nil
	}
	if err := st.save(f.stateFile); err != nil {
		return err
	}
	f.saved = b
	return nil
}

func (f *follower) logStats(msg string) {
	live := 0
	for _, t := range f.files {
		if t.pw != nil {
			live++
		}
	}
	f.mu.Lock()
	published, skipped := f.published, f.skipped
	f.mu.Unlock()
	f.log.Info(msg, "files", len(f.files), "reading", live, "published", published, "skipped_as_sent_before", skipped,
		"records", f.ended.Records, "malformed", f.ended.Malformed)
}

// runFollow is bridge -follow: it lists the input files, opens the output
// and follows until ctx is done.
func runFollow(ctx context.Context, o *options, log *slog.Logger) error {
	fi, err := os.Stat(o.in)
	if err != nil {
		return err
	}
	list := func() ([]string, error) {
		if _, err := os.Stat(o.in); err != nil {
			return nil, err
		}
		return []string{o.in}, nil
	}
	if fi.IsDir() {
		da, ok := o.adapter.(adapter.DirAdapter)
		if !ok {
			return fmt.Errorf("-in %s is a directory; -agent %s reads one file", o.in, o.agent)
		}
		list = func() ([]string, error) { return da.Files(o.in) }
	}
	if o.state == "" {
		if o.state, err = defaultStatePath(o.agent, o.in, o.natsURL, o.prefix); err != nil {
			return err
		}
	}
	open := func(ctx context.Context, log *slog.Logger) (adapter.Start, error) {
		return o.adapter.Open(ctx, adapter.Env{Log: log, Now: time.Now, MaxRecord: o.maxRecord, MaxOpen: o.maxOpen})
	}
	if _, err := open(ctx, log); err != nil { // what the adapter reads beside the input, before the output is opened
		return err
	}
	out, err := openOutput(o, io.Discard, log)
	if err != nil {
		return err
	}
	f := &follower{agent: o.agent, root: o.in, list: list, open: open, out: out, log: log, stateFile: o.state, poll: o.poll}
	return errors.Join(f.run(ctx), out.Close(ctx))
}
