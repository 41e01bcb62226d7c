package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/queries"
)

// deadLetterColumns are the columns of dead_letters, in the order of
// appendDead.
var deadLetterColumns = []string{"received_at", "origin", "stream", "stream_seq", "subject", "file", "line",
	"reason_code", "reason", "source", "id", "type", "raw", "dead_id", "raw_size", "raw_sha256"}

// lastDeadID returns the largest dead_id stored, 0 if none. The writer
// numbers new dead letters after it (it is the only writer: see Open).
func lastDeadID(ctx context.Context, db *sql.DB) (int64, error) {
	var n int64
	if err := db.QueryRowContext(ctx, queries.MustRead("ingest/last_dead_id.sql")).Scan(&n); err != nil {
		return 0, fmt.Errorf("number of the last dead letter: %w", err)
	}
	return n, nil
}

// The outcomes of a replayed dead letter, in dead_letter_replays.result.
const (
	ReplayStored    = "stored"     // valid now, and stored by the replay
	ReplayDuplicate = "duplicate"  // valid now, and already stored
	ReplayStillDead = "still_dead" // not valid: the dead letter's reason_code and reason become the replay's
)

// DeadLetter is a stored dead letter, as a replay reads it.
type DeadLetter struct {
	ID         int64 // dead_letters.dead_id
	ReceivedAt time.Time
	Origin     Origin
	Stream     string
	StreamSeq  uint64
	Subject    string
	File       string
	Line       int64
	Code       string
	Reason     string
	Raw        []byte // at most MaxDeadLetterRaw bytes: see Truncated
	Size       int64  // bytes of the message as received
	SHA256     string // hex SHA-256 of the message as received
}

// Truncated reports whether Raw holds only the first bytes of the message.
func (d DeadLetter) Truncated() bool { return int64(len(d.Raw)) < d.Size }

// Item returns the item that runs d again once ev or dead is set: it keeps
// d's provenance (subject, stream sequence, file and line) and names d.
func (d DeadLetter) Item() Item {
	return Item{Raw: d.Raw, Subject: d.Subject, StreamSeq: d.StreamSeq, File: d.File, Line: d.Line, DeadLetter: d.ID}
}

// DeadLetters returns up to limit dead letters to replay, those no replay
// resolved, numbered above after, in order. A replay pages through them with the last ID of each page; the
// ones it resolves drop out of later calls.
func (s *Store) DeadLetters(ctx context.Context, after int64, limit int) ([]DeadLetter, error) {
	rows, err := s.db.QueryContext(ctx, queries.MustRead("ingest/dead_letters_to_replay.sql"), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read dead letters after %d: %w", after, err)
	}
	defer rows.Close()
	var out []DeadLetter
	for rows.Next() {
		var d DeadLetter
		var origin string
		var stream, subject, file sql.NullString
		var seq sql.Null[uint64]
		var line sql.NullInt64
		if err := rows.Scan(&d.ID, &d.ReceivedAt, &origin, &stream, &seq, &subject, &file, &line, &d.Code, &d.Reason, &d.Raw, &d.Size, &d.SHA256); err != nil {
			return nil, fmt.Errorf("read dead letters after %d: %w", after, err)
		}
		d.Origin, d.Stream, d.StreamSeq, d.Subject, d.File, d.Line = Origin(origin), stream.String, seq.V, subject.String, file.String, line.Int64
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read dead letters after %d: %w", after, err)
	}
	return out, nil
}

// Outcome is what a Write would do with one item now.
type Outcome struct {
	Duplicate bool  // skipped: the same event is stored, or earlier in the batch
	Dead      *Dead // a dead letter (the item's own, or a conflicting duplicate); nil with Duplicate false: stored
}

// Preview returns, for each item of b, what Write would do with it now,
// writing nothing. It does not try the database's own checks: an event it
// would store may still be refused (ReasonStoreRejected) by WriteIsolating.
func (s *Store) Preview(ctx context.Context, b Batch) ([]Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(ctx, "preview batch"); err != nil {
		return nil, err
	}
	fates, err := s.dedupe(ctx, b.Items)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(fates))
	for i, f := range fates {
		out[i] = Outcome{Duplicate: f.dup, Dead: f.item.Dead}
	}
	return out, nil
}

// replayMarks are the outcomes of the replayed dead letters of a batch,
// as the parameters of queries/ingest/mark_replayed.sql and, for those
// still dead, update_replayed.sql.
type replayMarks struct {
	ids, deadIDs        []int64
	results             []string
	deadCodes, deadWhys []string
}

// marksOf returns the outcomes of the items of a batch that replay a dead
// letter.
func marksOf(fates []fate) replayMarks {
	var m replayMarks
	for _, f := range fates {
		it := f.item
		if it.DeadLetter == 0 {
			continue
		}
		result := ReplayStored
		switch {
		case f.dup:
			result = ReplayDuplicate
		case it.Dead != nil:
			result = ReplayStillDead
			m.deadIDs = append(m.deadIDs, it.DeadLetter)
			m.deadCodes, m.deadWhys = append(m.deadCodes, it.Dead.Code), append(m.deadWhys, it.Dead.Reason)
		}
		m.ids, m.results = append(m.ids, it.DeadLetter), append(m.results, result)
	}
	return m
}

// markReplayed records the outcomes, in the batch's transaction.
func (s *Store) markReplayed(ctx context.Context, m replayMarks, now time.Time) error {
	if len(m.ids) == 0 {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/mark_replayed.sql"), now, m.ids, m.results); err != nil {
		return fmt.Errorf("record the replay of %d dead letters: %w", len(m.ids), err)
	}
	if len(m.deadIDs) == 0 {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, queries.MustRead("ingest/update_replayed.sql"), m.deadIDs, m.deadCodes, m.deadWhys); err != nil {
		return fmt.Errorf("update the reasons of %d dead letters still dead: %w", len(m.deadIDs), err)
	}
	return nil
}

// ReplayOutcome is what the last replay of a dead letter recorded.
type ReplayOutcome struct {
	Result string // ReplayStored, ReplayDuplicate or ReplayStillDead; "" if never replayed
	Code   string // the dead letter's reason code and reason, after that replay
	Reason string
}

// ReplayOutcomes returns the outcome recorded on each of the dead letters
// ids, by id.
func (s *Store) ReplayOutcomes(ctx context.Context, ids []int64) (map[int64]ReplayOutcome, error) {
	out := make(map[int64]ReplayOutcome, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, queries.MustRead("ingest/replay_outcomes.sql"), ids)
	if err != nil {
		return nil, fmt.Errorf("read the outcomes of %d replayed dead letters: %w", len(ids), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var o ReplayOutcome
		var result sql.NullString
		if err := rows.Scan(&id, &result, &o.Code, &o.Reason); err != nil {
			return nil, fmt.Errorf("read the outcomes of replayed dead letters: %w", err)
		}
		o.Result = result.String
		out[id] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the outcomes of replayed dead letters: %w", err)
	}
	return out, nil
}
