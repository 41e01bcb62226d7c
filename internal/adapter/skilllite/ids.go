package skilllite

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/google/uuid"
)

// Ids derived from content: the same input bridged twice gives the same
// session ids and event ids, so the store (a row at most once per source and
// id) keeps each event once. A SkillLite turn is unique in its content: its
// done line carries a fresh random task_id (skilllite-agent/src/rpc.rs:681).

// turnHash accumulates the lines of one turn.
type turnHash struct{ h hash.Hash }

func newTurnHash() turnHash { return turnHash{h: sha256.New()} }

// add adds one line, without its line ending.
func (t turnHash) add(line []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(line)))
	t.h.Write(n[:])
	t.h.Write(line)
}

// sessionID is the id of the session the lines added so far make.
func (t turnHash) sessionID() string {
	return hashID(t.h.Sum([]byte("skilllite turn\x00")))
}

// eventID is the id of the event at seq of session.
func eventID(session string, seq int64) string {
	h := sha256.New()
	h.Write([]byte("skilllite event\x00" + session + "\x00"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq))
	h.Write(n[:])
	return hashID(h.Sum(nil))
}

// hashID formats the first 16 bytes of a SHA-256 sum as a UUIDv8 (RFC 9562:
// custom, here name-based on SHA-256).
func hashID(sum []byte) string {
	var u uuid.UUID
	copy(u[:], sum[len(sum)-sha256.Size:])
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}
