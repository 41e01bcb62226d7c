package realcli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/app/bridge"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// checkBridged runs `bridge -agent agent -in in` over what the real CLI
// just wrote, as a user would, and holds the events to the script's truth:
// a request each session, its plans, replans, real and failed calls and
// completions. Bridged again, the events are byte for byte the same.
func checkBridged(t *testing.T, agent, in string, truth realcli.Truth) {
	t.Helper()
	bridged := func() []byte {
		var out, errOut bytes.Buffer
		args := []string{"-agent", agent, "-source", agent + "/bridge/test", "-in", in, "-out", "-"}
		if code := bridge.Main(context.Background(), args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("bridge %q exited %d:\n%s", args, code, errOut.String())
		}
		return out.Bytes()
	}
	first := bridged()
	got, err := realcli.TruthOf(adaptertest.DecodeLines(t, first))
	if err != nil {
		t.Fatal(err)
	}
	if got != truth {
		t.Errorf("bridge -agent %s: %+v, want the script's %+v", agent, got, truth)
	}
	if again := bridged(); !bytes.Equal(first, again) {
		t.Errorf("bridge -agent %s: the same input bridged again gives other events", agent)
	}
}
