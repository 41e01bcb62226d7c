package events

import "testing"

// TestSourceSubject: the token rule of schema/README.md ("NATS"), with
// its test vector, which every other language's publisher is held to.
func TestSourceSubject(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"skilllite/host-a/worker-3", "evo.skilllite.331df221"}, // schema/README.md's vector
		{"coder", "evo.coder." + SourceToken("coder")},
	} {
		if got := SourceSubject("evo", tc.source); got != tc.want {
			t.Errorf("SourceSubject(evo, %q) = %q, want %q", tc.source, got, tc.want)
		}
	}
	if a, b := SourceToken("skilllite/host-a/worker-3"), SourceToken("skilllite/host-a/worker-4"); a == b || len(a) != 8 {
		t.Errorf("tokens %q, %q: want 8 hex digits, one per source", a, b)
	}
}
