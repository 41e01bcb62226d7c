package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   int
		stderr string
	}{
		{name: "success", err: nil, want: 0},
		{name: "wrong command line, already explained", err: ErrUsage, want: 2},
		{name: "wrapped usage", err: fmt.Errorf("flags: %w", ErrUsage), want: 2},
		{name: "failure", err: errors.New("open db: no such file"), want: 1, stderr: "tool: open db: no such file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := ExitStatus(&stderr, "tool", tt.err); got != tt.want || stderr.String() != tt.stderr {
				t.Fatalf("ExitStatus(%v) = %d, stderr %q; want %d, %q", tt.err, got, stderr.String(), tt.want, tt.stderr)
			}
		})
	}
}
