package cli

import (
	"context"
	"testing"
)

func TestCmd(t *testing.T) {
	evosignal := WithProg(context.Background(), Prog{Name: "evosignal", Aliases: map[string]string{"agentsim demo": "demo"}})
	tests := []struct {
		name string
		ctx  context.Context
		line string
		want string
	}{
		{"standalone", context.Background(), "analyze trend -every day", "analyze trend -every day"},
		{"standalone alias", context.Background(), "agentsim demo -h", "agentsim demo -h"},
		{"under a program", evosignal, "analyze trend -every day", "evosignal analyze trend -every day"},
		{"alias", evosignal, "agentsim demo", "evosignal demo"},
		{"alias with flags", evosignal, "agentsim demo -h", "evosignal demo -h"},
		{"not the alias", evosignal, "agentsim truth", "evosignal agentsim truth"},
		{"only whole words", evosignal, "agentsim demonstrate", "evosignal agentsim demonstrate"},
		{"command alone", evosignal, "agentsim", "evosignal agentsim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cmd(tt.ctx, tt.line); got != tt.want {
				t.Fatalf("Cmd(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}
