package events

import (
	"crypto/sha256"
	"encoding/hex"
)

// SourceToken returns the subject token of a source: the first 8 hex digits
// (lower case) of the SHA-256 of the source's bytes, "b1c2e6a1"-like.
//
// It puts every event of one source, hence of one session and of one
// de-duplication key (source, id), on one subject, so that a partition
// mapping of the server spreads an agent's instances over partitions and
// keeps each instance whole. SHA-256 rather than a faster hash: every
// language has it in its standard library (Go, Python's hashlib, Node's
// crypto, Java's MessageDigest), so any publisher computes the same token.
// 32 bits spread sources evenly; two sources sharing a token only share a
// subject, which is harmless.
func SourceToken(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:4])
}

// SourceSubject is the subject the events of source are published on:
// <prefix>.<agent>.<token>, with the agent (AgentOf) and SourceToken of
// source.
func SourceSubject(prefix, source string) string {
	return prefix + "." + AgentOf(source) + "." + SourceToken(source)
}
