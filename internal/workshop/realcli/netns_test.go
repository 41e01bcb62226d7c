package realcli_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// TestNamespace: a process started in the namespace sees loopback and
// nothing else, reaches a listener of the namespace, and has no route out.
func TestNamespace(t *testing.T) {
	ns, err := realcli.NewNamespace()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	l, err := ns.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() { l.Close(); <-done }()
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "hello from the namespace")
			c.Close()
		}
	}()
	port := l.Addr().String()[strings.LastIndex(l.Addr().String(), ":")+1:]
	tests := []struct {
		name, script, want string
	}{
		// /proc/net/dev is the reading process's namespace's (sysfs is
		// its mounter's).
		{"interfaces", `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`, "lo\n"},
		{"the namespace's listener", `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && head -n1 <&3`, "hello from the namespace\n"},
		{"no route out", `exec 3<>/dev/tcp/192.0.2.1/80 2>/dev/null && echo connected || echo unreachable`, "unreachable\n"},
	}
	for _, tt := range tests {
		cmd := exec.Command("bash", "-c", tt.script)
		var out strings.Builder
		cmd.Stdout = &out
		if err := ns.Start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if got := out.String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
