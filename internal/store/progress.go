package store

import "time"

// Progress is one step of a long store operation, as Options.Progress
// receives it.
type Progress struct {
	// Op is the operation: "rebuild" or "facts" (a facts refresh stored in
	// passes).
	Op string
	// Step names what was done: "derive <table>" or "facts pass".
	Step string
	// Rows is what the step wrote, when it counts rows (a derived table);
	// -1 when it does not.
	Rows int64
	// Done of Of steps of the operation are finished. Of grows once, when
	// a rebuild has derived its tables and knows how many facts passes
	// follow.
	Done, Of int
	Took     time.Duration // this step
	Elapsed  time.Duration // since the operation started
	// ETA is the time left, estimated from the steps of the same kind done
	// so far (facts passes are of equal size); 0 when not known.
	ETA time.Duration
}

// progress reports the steps of one operation to Options.Progress; a nil
// *progress reports nothing.
type progress struct {
	report  func(Progress)
	op      string
	of      int
	done    int
	started time.Time
	last    time.Time
	// passes: facts passes done and the time they took together.
	passes    int
	passTotal time.Duration
}

func (s *Store) newProgress(op string, of int) *progress {
	if s.progressFn == nil {
		return nil
	}
	now := time.Now()
	return &progress{report: s.progressFn, op: op, of: of, started: now, last: now}
}

// addSteps adds n steps to the operation's count (facts passes, known only
// once the derived tables are done).
func (p *progress) addSteps(n int) {
	if p != nil {
		p.of += n
	}
}

// step reports a finished step that wrote rows (-1: not counted).
func (p *progress) step(name string, rows int64) {
	if p == nil {
		return
	}
	p.emit(name, rows, func(time.Duration) time.Duration { return 0 })
}

// pass reports a finished facts pass, with an ETA from the mean pass.
func (p *progress) pass() {
	if p == nil {
		return
	}
	p.emit("facts pass", -1, func(took time.Duration) time.Duration {
		p.passes++
		p.passTotal += took
		return p.passTotal / time.Duration(p.passes) * time.Duration(p.of-p.done)
	})
}

func (p *progress) emit(name string, rows int64, eta func(took time.Duration) time.Duration) {
	now := time.Now()
	p.done++
	pr := Progress{Op: p.op, Step: name, Rows: rows, Done: p.done, Of: p.of, Took: now.Sub(p.last), Elapsed: now.Sub(p.started)}
	p.last = now
	pr.ETA = eta(pr.Took)
	p.report(pr)
}
