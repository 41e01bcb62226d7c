package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/queries"
)

// Origin says where a batch came from.
type Origin string

const (
	FromNATS Origin = "nats"
	FromFile Origin = "file"
	// FromReplay: dead letters run again (see DeadLetters); each item
	// names its dead letter in Item.DeadLetter.
	FromReplay Origin = "replay"
)

// Item is one message of a batch: an accepted event, or a dead letter.
type Item struct {
	Event *events.Event // nil for a dead letter
	Raw   []byte        // the bytes as received (kept for dead letters)

	Subject   string // NATS subject; empty for files
	StreamSeq uint64 // JetStream sequence; 0 for files
	File      string // file loads: the file name
	Line      int64  // file loads: 1-based line

	Dead *Dead // why it is not accepted; nil for an event

	// DeadLetter, in a replay, is the dead_letters.dead_id of the dead
	// letter this item runs again: the commit records the outcome in
	// dead_letter_replays (stored, duplicate, or still dead, the row then
	// taking the new reason) instead of adding a dead letter. 0 otherwise.
	DeadLetter int64
}

// Dead describes a message the ingester cannot accept.
type Dead struct {
	Code   string // malformed_json | unknown_type | schema_violation | oversize | source_mismatch | plan_too_large | conflicting_duplicate | after_session_end | store_rejected
	Reason string // readable explanation
	Source string // envelope fields, when they could be read
	ID     string
	Type   string
}

// Batch is what Write commits in one transaction.
type Batch struct {
	Origin   Origin
	Stream   string // the JetStream stream, with FromNATS
	Position uint64 // stream sequence reached; recorded when Origin is FromNATS
	// StreamCreated identifies the stream instance (its creation time),
	// recorded with the position.
	StreamCreated time.Time
	Items         []Item
	// OnDeadLetter, when set, is called after the batch committed, in
	// order, with each item stored as a dead letter: the ones that came
	// dead and the ones the store made so (conflicting duplicates, events
	// the database refused). Never called for a batch that failed.
	OnDeadLetter func(Item)
}

// Result counts what a Write did with a batch.
type Result struct {
	Accepted    int
	Duplicates  int
	DeadLetters int
}

func (r *Result) Add(o Result) {
	r.Accepted += o.Accepted
	r.Duplicates += o.Duplicates
	r.DeadLetters += o.DeadLetters
}

// Write commits a batch: accepted events into the event log and the typed
// tables, dead letters, the stream position and a row of ingest_batches, all
// in one transaction. An event whose (source, id) is already stored, or came
// earlier in the batch, is a duplicate, counted and skipped, when its content
// is the same (see events.Event.ContentHash), and a dead letter
// (ReasonConflictingDuplicate) when it is not. On error nothing of the batch
// is stored.
func (s *Store) Write(ctx context.Context, b Batch) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(ctx, "write batch"); err != nil {
		return Result{}, err
	}
	if err := s.ck.waitUnderLimit(ctx); err != nil {
		if invalidated(err) { // by the failed checkpoint: open the file again next time
			s.broken = fmt.Errorf("database invalidated: %w", err)
		}
		return Result{}, fmt.Errorf("write batch: %w", err)
	}
	t0 := s.stepStart()
	fates, err := s.dedupe(ctx, b.Items)
	if err == nil {
		err = s.afterEnd(ctx, fates)
	}
	if err != nil {
		// Their reads are the batch's first queries: they are the first
		// to see a database a failed checkpoint invalidated in between.
		if invalidated(err) {
			s.broken = fmt.Errorf("database invalidated: %w", err)
		}
		return Result{}, err
	}
	s.step("dedupe", t0)
	keep, hashes, res := splitFates(fates)
	now := time.Now().UTC()
	if err := s.commit(ctx, b, keep, hashes, marksOf(fates), now, &res); err != nil {
		if invalidated(err) {
			s.broken = fmt.Errorf("database invalidated: %w", err)
			return Result{}, err
		}
		return Result{}, errors.Join(err, s.reset())
	}
	s.ck.poke()
	for _, h := range hashes {
		s.keys.add(h)
	}
	if b.OnDeadLetter != nil {
		for _, it := range keep {
			if it.Dead != nil {
				b.OnDeadLetter(it)
			}
		}
	}
	return res, nil
}

// writable says why the store cannot write now, if it cannot: it is
// closed, or it is broken (a failed batch left it unusable, or DuckDB
// invalidated the database) and opening it again failed. Call it with s.mu
// held.
func (s *Store) writable(ctx context.Context, op string) error {
	if s.closed {
		return fmt.Errorf("%s: %w", op, ErrClosed)
	}
	if s.broken != nil {
		if err := s.reopen(ctx); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}

// ErrClosed is returned by writes to a closed Store.
var ErrClosed = errors.New("store is closed")

// reset discards what a failed batch left behind: rows the appenders still
// buffer (a later flush would store them outside the rolled-back
// transaction). The appenders are then made anew. If that fails the store
// refuses further writes until it opens its file again.
func (s *Store) reset() error {
	err := s.closeAppenders()
	if err == nil {
		err = s.newAppenders()
	}
	if err != nil {
		s.broken = fmt.Errorf("store unusable after a failed batch: %w", err)
		return s.broken
	}
	return nil
}

// splitFates returns the items of a batch to store, the key hashes of the
// events among them, and the duplicates counted.
func splitFates(fates []fate) (keep []Item, hashes []uint64, res Result) {
	keep = make([]Item, 0, len(fates))
	hashes = make([]uint64, 0, len(fates))
	for _, f := range fates {
		if f.dup {
			res.Duplicates++
			continue
		}
		keep = append(keep, f.item)
		if f.item.Event != nil {
			hashes = append(hashes, f.hash)
		}
	}
	return keep, hashes, res
}

// stepStart is the start of a step for the StepTimer; zero without one.
func (s *Store) stepStart() time.Time {
	if s.steps == nil {
		return time.Time{}
	}
	return time.Now()
}

// step reports the step that started at t0 to the StepTimer, if any, and
// returns the start of the next.
func (s *Store) step(name string, t0 time.Time) time.Time {
	if s.steps == nil {
		return t0
	}
	now := time.Now()
	s.steps(name, now.Sub(t0))
	return now
}

func (s *Store) commit(ctx context.Context, b Batch, items []Item, hashes []uint64, marks replayMarks, now time.Time, res *Result) (err error) {
	t := s.stepStart()
	if _, err := s.w.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("begin batch: %w", err)
	}
	t = s.step("begin", t)
	defer func() {
		if err != nil {
			// A failed statement may already have aborted the transaction.
			s.w.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	var first, last uint64
	hi := 0
	dead := s.lastDead // numbers the new dead letters
	// The sessions of the events, each once, in order: their facts are to
	// be computed again.
	var sessions []string
	pending := map[string]struct{}{}
	for _, it := range items {
		if it.StreamSeq != 0 {
			if first == 0 || it.StreamSeq < first {
				first = it.StreamSeq
			}
			last = max(last, it.StreamSeq)
		}
		if it.Dead != nil {
			if it.DeadLetter == 0 { // a replayed one is updated in place (marks)
				dead++
				if err := s.appendDead(b, it, dead, now); err != nil {
					return err
				}
			}
			res.DeadLetters++
			continue
		}
		if err := s.appendEvent(it, hashes[hi], now); err != nil {
			return err
		}
		if _, ok := pending[it.Event.Subject]; !ok {
			pending[it.Event.Subject] = struct{}{}
			sessions = append(sessions, it.Event.Subject)
		}
		hi++
		res.Accepted++
	}
	for _, session := range sessions {
		if err := s.app.factsPending.AppendRow(session); err != nil {
			return fmt.Errorf("append pending session %s: %w", session, err)
		}
	}
	t = s.step("append rows", t)
	if err := s.app.events.Flush(); err != nil {
		return fmt.Errorf("insert batch into events at seq %d: %w", last, flushError(err))
	}
	t = s.step("flush events", t)
	for _, tt := range typedTables {
		if err := (*tt.app(&s.app)).Flush(); err != nil {
			return fmt.Errorf("append batch to %s at seq %d: %w", tt.name, last, flushError(err))
		}
		t = s.step("flush "+tt.name, t)
	}
	if err := s.app.factsPending.Flush(); err != nil {
		return fmt.Errorf("mark the batch's sessions pending: %w", flushError(err))
	}
	t = s.step("flush facts_pending", t)
	if err := s.app.dead.Flush(); err != nil {
		return fmt.Errorf("append dead letters at seq %d: %w", last, flushError(err))
	}
	t = s.step("flush dead_letters", t)
	if err := s.markReplayed(ctx, marks, now); err != nil {
		return err
	}
	if b.Origin == FromNATS && b.Position > 0 {
		if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/save_position.sql"), b.Stream, b.Position, nullTime(b.StreamCreated), now); err != nil {
			return fmt.Errorf("save position %d: %w", b.Position, err)
		}
		t = s.step("save position", t)
	}
	pruned, err := s.pruneDue(ctx, now)
	if err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/record_batch.sql"),
		now, string(b.Origin), nullString(b.Stream), nullSeq(first), nullSeq(last),
		len(b.Items), res.Accepted, res.Duplicates, res.DeadLetters); err != nil {
		return fmt.Errorf("record batch: %w", err)
	}
	t = s.step("record batch", t)
	if _, err := s.w.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit batch at seq %d: %w", last, err)
	}
	s.step("commit", t)
	s.lastDead = dead
	if pruned {
		s.lastPrune = now
	}
	return nil
}

// appendEvent appends an accepted event's row of events and its rows of the
// typed tables.
func (s *Store) appendEvent(it Item, h uint64, now time.Time) error {
	e := it.Event
	var ext any
	if len(e.Extensions) > 0 || e.DataSchema != "" {
		j, err := extJSON(e)
		if err != nil {
			return &eventError{err}
		}
		ext = j
	}
	err := s.app.events.AppendRow(
		e.Source, e.ID, string(e.Type), e.Time.UTC(), e.Subject, e.Seq, []byte(e.Data),
		events.AgentOf(e.Source), ext, nullString(it.Subject), nullSeq(it.StreamSeq), now, h,
	)
	if err == nil {
		err = s.app.appendTyped(e)
	}
	if err != nil {
		return fmt.Errorf("append event %s from %s: %w", e.ID, e.Source, appendError(err))
	}
	return nil
}

func (s *Store) appendDead(b Batch, it Item, id int64, now time.Time) error {
	d := it.Dead
	var stream any
	if b.Origin == FromNATS {
		stream = b.Stream
	}
	var line any
	if it.Line > 0 {
		line = it.Line
	}
	raw := it.Raw
	if raw == nil {
		raw = []byte{}
	}
	sum := sha256.Sum256(raw)
	size := len(raw)
	raw = raw[:min(size, MaxDeadLetterRaw)]
	err := s.app.dead.AppendRow(now, string(b.Origin), stream, nullSeq(it.StreamSeq), nullString(it.Subject),
		nullString(it.File), line, d.Code, d.Reason, nullString(d.Source), nullString(d.ID), nullString(d.Type), raw, id,
		int64(size), hex.EncodeToString(sum[:]))
	if err != nil {
		return fmt.Errorf("append dead letter (%s): %w", d.Code, err)
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nullSeq(n uint64) any {
	if n == 0 {
		return nil
	}
	return n
}

// extJSON is the ext column: dataschema and extension attributes other than seq.
func extJSON(e *events.Event) (string, error) {
	m := make(map[string]any, len(e.Extensions)+1)
	for k, v := range e.Extensions {
		m[k] = v
	}
	if e.DataSchema != "" {
		m["dataschema"] = e.DataSchema
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode extension attributes of event %s: %w", e.ID, err)
	}
	return string(b), nil
}

// ReasonStoreRejected is the dead-letter code of an event that decoded and
// validated but that the database refused for its content (a value out of
// a column's range, say: FaultEvent): WriteIsolating stores it as a dead
// letter instead of blocking the stream. An error of the environment never
// leads to it.
const ReasonStoreRejected = "store_rejected"

// WriteIsolating writes b like Write. When the database rejects the batch
// because of the content of some of its events (FaultOf is FaultEvent), it
// halves the batch until it finds them, stores each as a dead letter
// (ReasonStoreRejected, with the database's error) and the rest as usual, in
// order, each part in its own transaction with its own position.
//
// An error of the environment (disk full, out of memory, I/O, an
// invalidated database…) dead-letters nothing: it is returned as it is, and
// the parts written before it stay committed. WriteIsolatingPart says how
// many items those parts held, so that a retry starts after them.
func (s *Store) WriteIsolating(ctx context.Context, b Batch) (Result, error) {
	res, _, err := s.WriteIsolatingPart(ctx, b)
	return res, err
}

// WriteIsolatingPart is WriteIsolating that also returns how many items of
// b, from its start, are committed: all of them on success; on an error of
// the environment the ones before the part that failed. Retry with
// b.Items[done:] and nothing is written twice.
func (s *Store) WriteIsolatingPart(ctx context.Context, b Batch) (res Result, done int, err error) {
	res, err = s.Write(ctx, b)
	if err == nil {
		return res, len(b.Items), nil
	}
	if len(b.Items) == 0 || FaultOf(err) != FaultEvent {
		return Result{}, 0, err
	}
	if len(b.Items) == 1 {
		it := b.Items[0]
		if it.Dead != nil {
			// Even the dead letter's own row is refused: nothing to blame
			// on an event.
			return Result{}, 0, err
		}
		e := it.Event
		it.Dead = &Dead{Code: ReasonStoreRejected, Reason: fmt.Sprintf("the database refused the event: %v", err),
			Source: e.Source, ID: e.ID, Type: string(e.Type)}
		if it.Raw == nil {
			it.Raw, _ = json.Marshal(e)
		}
		it.Event = nil
		one := b
		one.Items = []Item{it}
		res, derr := s.Write(ctx, one)
		if derr != nil {
			return Result{}, 0, fmt.Errorf("store the dead letter of event %s from %s (%v): %w", e.ID, e.Source, err, derr)
		}
		return res, 1, nil
	}
	var total Result
	half := len(b.Items) / 2
	for _, part := range [][]Item{b.Items[:half], b.Items[half:]} {
		pb := b
		pb.Items = part
		if b.Position > 0 {
			pb.Position = lastSeq(part, b.Position)
		}
		r, n, err := s.WriteIsolatingPart(ctx, pb)
		total.Add(r)
		done += n
		if err != nil {
			return total, done, err
		}
	}
	return total, done, nil
}

// lastSeq is the stream position a part of a batch reaches: its last item's
// sequence (items are in stream order), or the batch's when none has one.
func lastSeq(items []Item, batchPos uint64) uint64 {
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].StreamSeq != 0 {
			return items[i].StreamSeq
		}
	}
	return batchPos
}
