package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ArgsDigest is the args_digest (v1.3) evosignal's adapters and publisher
// write for a tool call's arguments: the first 16 hex digits of the
// SHA-256 of the arguments as canonical JSON (objects' members sorted by
// name, no insignificant space, numbers as written), so that the same
// arguments in another member order or spacing give the same digest.
// Arguments that are not JSON are digested as they are. Empty arguments
// (no bytes, or JSON null) give "": no digest.
func ArgsDigest(args []byte) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return ""
	}
	canon := args
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:8])
}
