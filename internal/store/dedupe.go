package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/queries"
)

// ReasonConflictingDuplicate is the dead-letter code of an event whose
// (source, id) is already stored, or came earlier in its batch, with other
// content: a different event under a key that must name one. The first one
// stays; the reason names the members that differ and gives both content
// hashes (events.Event.ContentHash). A re-send with the same content (a
// JetStream redelivery, a publisher's retry, a file loaded again) is a
// plain duplicate.
const ReasonConflictingDuplicate = "conflicting_duplicate"

// fate is what a Write does with one item of a batch.
type fate struct {
	item Item   // to store: an event, or a dead letter (conflicts included)
	dup  bool   // a duplicate: skipped
	hash uint64 // the key hash of an event to store
}

// dedupe decides, in order, the fate of each item of a batch: an event not
// stored yet and not earlier in the batch is stored; one that is, with the
// same content, is a duplicate; with other content, a dead letter
// (ReasonConflictingDuplicate). Dead letters stay dead letters.
func (s *Store) dedupe(ctx context.Context, items []Item) ([]fate, error) {
	if err := s.reserveKeys(ctx, len(items)); err != nil {
		return nil, err
	}
	hashes := make([]uint64, len(items))
	var candidates []uint64
	for i := range items {
		if e := items[i].Event; e != nil {
			h := KeyHash(e.Source, e.ID)
			hashes[i] = h
			if s.keys.has(h) {
				candidates = append(candidates, h)
			}
		}
	}
	stored, err := s.confirm(ctx, candidates)
	if err != nil {
		return nil, err
	}
	fates := make([]fate, len(items))
	inBatch := make(map[key]*events.Event, len(items))
	for i, it := range items {
		fates[i].item = it
		e := it.Event
		if e == nil {
			continue
		}
		k := key{e.Source, e.ID}
		prior, where := stored[k], "is already stored"
		if prior == nil {
			prior, where = inBatch[k], "came earlier in this batch"
		}
		if prior == nil {
			inBatch[k] = e
			fates[i].hash = hashes[i]
			continue
		}
		d, err := conflict(prior, e, where)
		if err != nil {
			return nil, err
		}
		if d == nil {
			fates[i].dup = true
			continue
		}
		if it.Raw == nil {
			it.Raw, _ = json.Marshal(e)
		}
		it.Event, it.Dead = nil, d
		fates[i].item = it
	}
	return fates, nil
}

// conflict compares an event with the one first seen under its key: nil if
// they are the same event, else the conflicting duplicate's dead letter.
func conflict(first, e *events.Event, where string) (*Dead, error) {
	same, err := events.SameContent(first, e)
	if err != nil || same {
		return nil, err
	}
	h1, err := first.ContentHash()
	if err != nil {
		return nil, err
	}
	h2, err := e.ContentHash()
	if err != nil {
		return nil, err
	}
	diff, err := events.ContentDiff(first, e)
	if err != nil {
		return nil, err
	}
	return &Dead{
		Code: ReasonConflictingDuplicate,
		Reason: fmt.Sprintf("an event with this source and id %s with other content (%s differ): that one has content hash sha256:%s, this one sha256:%s",
			where, strings.Join(diff, ", "), h1, h2),
		Source: e.Source, ID: e.ID, Type: string(e.Type),
	}, nil
}

type key struct{ source, id string }

// confirm looks up which candidate hashes belong to events really stored,
// returning those events by their exact keys.
func (s *Store) confirm(ctx context.Context, hashes []uint64) (map[key]*events.Event, error) {
	out := map[key]*events.Event{}
	if len(hashes) == 0 {
		return out, nil
	}
	rows, err := s.w.QueryContext(ctx, queries.MustRead("ingest/confirm_keys.sql"), hashes)
	if err != nil {
		return nil, fmt.Errorf("confirm %d duplicate candidates: %w", len(hashes), err)
	}
	defer rows.Close()
	for rows.Next() {
		var h uint64
		var e events.Event
		var typ, data string
		var ext sql.NullString
		if err := rows.Scan(&h, &e.Source, &e.ID, &typ, &e.Time, &e.Subject, &e.Seq, &data, &ext); err != nil {
			return nil, fmt.Errorf("confirm duplicate candidates: %w", err)
		}
		e.SpecVersion, e.DataContentType, e.Type, e.Data = events.SpecVersion, events.ContentType, events.Type(typ), json.RawMessage(data)
		if ext.Valid {
			if err := fromExtJSON(&e, ext.String); err != nil {
				return nil, fmt.Errorf("confirm duplicate candidates: %w", err)
			}
		}
		out[key{e.Source, e.ID}] = &e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("confirm duplicate candidates: %w", err)
	}
	return out, nil
}

// fromExtJSON sets a stored event's dataschema and extension attributes
// from its ext column (see extJSON).
func fromExtJSON(e *events.Event, ext string) error {
	d := json.NewDecoder(strings.NewReader(ext))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return fmt.Errorf("ext of stored event %s: %w", e.ID, err)
	}
	if ds, ok := m["dataschema"].(string); ok {
		e.DataSchema = ds
		delete(m, "dataschema")
	}
	if len(m) > 0 {
		e.Extensions = m
	}
	return nil
}
