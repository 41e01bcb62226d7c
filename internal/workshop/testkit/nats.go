// Package testkit holds test helpers that start real servers: an embedded
// nats-server, and nats-server as a separate process (built from the Go
// module proxy when it is not installed). A helper never skips: a missing
// server is a test failure.
package testkit

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/internal/bus"
)

// NATSServerVersion is the standalone nats-server the integration tests run.
const NATSServerVersion = "v2.15.2"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// NATSServerBinary returns the path of a nats-server binary of
// NATSServerVersion: from PATH or GOPATH/bin if its build info says it is
// that version, else built with `go install` into the user cache.
func NATSServerBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binPath, binErr = findOrInstall("nats-server", "github.com/nats-io/nats-server/v2", NATSServerVersion)
	})
	if binErr != nil {
		tb.Fatalf("nats-server %s: %v", NATSServerVersion, binErr)
	}
	return binPath
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// NATSProcess is nats-server running as a child process with JetStream on a
// fixed port and store directory, so it can be stopped and started again.
type NATSProcess struct {
	tb    testing.TB
	bin   string
	port  int
	store string
	cmd   *exec.Cmd
	done  chan struct{}
}

// StartNATSProcess starts nats-server -js on a free loopback port; it is
// stopped when the test ends.
func StartNATSProcess(tb testing.TB) *NATSProcess {
	tb.Helper()
	p := &NATSProcess{tb: tb, bin: NATSServerBinary(tb), port: FreePort(tb), store: tb.TempDir()}
	p.Start()
	tb.Cleanup(p.Stop)
	return p
}

// URL is the client URL.
func (p *NATSProcess) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", p.port) }

// Start starts the server (again) and waits until it accepts clients.
func (p *NATSProcess) Start() {
	p.tb.Helper()
	p.cmd = exec.Command(p.bin, "-js", "-a", "127.0.0.1", "-p", fmt.Sprint(p.port), "-sd", p.store)
	if testing.Verbose() {
		p.cmd.Stdout, p.cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := p.cmd.Start(); err != nil {
		p.tb.Fatalf("start nats-server: %v", err)
	}
	p.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(p.cmd, p.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(p.URL(), nats.Timeout(time.Second))
		if err == nil {
			js, _ := jetstream.New(nc)
			_, aerr := js.AccountInfo(p.tb.Context())
			nc.Close()
			if aerr == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("nats-server on %s not ready: %v", p.URL(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits.
func (p *NATSProcess) Stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	p.cmd = nil
}

// Embedded starts an in-process nats-server with JetStream on a random
// loopback port and returns it with a JetStream client; both are closed when
// the test ends.
func Embedded(tb testing.TB) (*bus.Server, *nats.Conn, jetstream.JetStream) {
	tb.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: tb.TempDir()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	nc, js := Client(tb, srv.ClientURL())
	return srv, nc, js
}

// Client connects to url with reconnects forever; closed when the test ends.
func Client(tb testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	tb.Helper()
	nc, err := bus.Connect(bus.ConnConfig{URL: url, Name: tb.Name()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return nc, js
}
