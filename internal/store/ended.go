package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/evosignal/evosignal/internal/events"
)

// ReasonAfterSessionEnd is the dead-letter code of an agent.model.called
// whose seq comes after its session's agent.session.ended: a call the
// session cannot have made, whose tokens must not be summed. The check
// sees the session's end when it is stored already or comes in the same
// batch; a model call stored before its session's end arrives stays (the
// contract's ordering makes that a publisher's bug, not a state to guess
// about).
const ReasonAfterSessionEnd = "after_session_end"

// afterEnd dead-letters, in place, the model calls among fates to store
// whose session ended at a lower seq, in the database or in the batch.
func (s *Store) afterEnd(ctx context.Context, fates []fate) error {
	ends := map[key]int64{} // (source, session) → the lowest seq of its agent.session.ended
	var sessions []string   // the sessions of the batch's model calls, for the lookup
	asked := map[string]bool{}
	for _, f := range fates {
		e := f.item.Event
		if e == nil || f.dup {
			continue
		}
		switch e.Type {
		case events.SessionEnded:
			k := key{e.Source, e.Subject}
			if seq, ok := ends[k]; !ok || e.Seq < seq {
				ends[k] = e.Seq
			}
		case events.ModelCalled:
			if !asked[e.Subject] {
				asked[e.Subject] = true
				sessions = append(sessions, e.Subject)
			}
		}
	}
	if len(sessions) == 0 {
		return nil
	}
	rows, err := s.w.QueryContext(ctx, `SELECT source, session, min(seq) FROM session_ends WHERE list_contains(?, session) GROUP BY ALL`, sessions)
	if err != nil {
		return fmt.Errorf("look up the ends of %d sessions: %w", len(sessions), err)
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var seq int64
		if err := rows.Scan(&k.source, &k.id, &seq); err != nil {
			return fmt.Errorf("look up session ends: %w", err)
		}
		if old, ok := ends[k]; !ok || seq < old {
			ends[k] = seq
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look up session ends: %w", err)
	}
	for i, f := range fates {
		e := f.item.Event
		if e == nil || f.dup || e.Type != events.ModelCalled {
			continue
		}
		end, ok := ends[key{e.Source, e.Subject}]
		if !ok || e.Seq <= end {
			continue
		}
		it := f.item
		if it.Raw == nil {
			it.Raw, _ = json.Marshal(e)
		}
		it.Event, it.Dead = nil, &Dead{
			Code:   ReasonAfterSessionEnd,
			Reason: fmt.Sprintf("a model call at seq %d after its session's agent.session.ended at seq %d: its tokens are not summed", e.Seq, end),
			Source: e.Source, ID: e.ID, Type: string(e.Type),
		}
		fates[i].item, fates[i].hash = it, 0
	}
	return nil
}
