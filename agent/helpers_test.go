package agent_test

import (
	"bytes"
	"strings"
)

type lineBuf struct{ bytes.Buffer }

func (b *lineBuf) lines() []string {
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}
