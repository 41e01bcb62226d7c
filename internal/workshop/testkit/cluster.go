package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSCluster is a JetStream cluster of nats-server child processes on
// loopback; each node can be SIGKILLed and started again on its port and
// store.
type NATSCluster struct {
	tb    testing.TB
	Nodes []*ClusterNode
}

// ClusterNode is one server of a NATSCluster.
type ClusterNode struct {
	Name  string // server name, as JetStream reports leaders and peers
	bin   string
	port  int
	conf  string
	cmd   *exec.Cmd
	done  chan struct{}
	owner *NATSCluster
}

// StartNATSCluster starts n nats-server processes with JetStream, routed to
// each other as cluster "evo", and waits until JetStream answers through
// every node. They are stopped when the test ends.
func StartNATSCluster(tb testing.TB, n int) *NATSCluster {
	tb.Helper()
	bin := NATSServerBinary(tb)
	c := &NATSCluster{tb: tb}
	clusterPorts := make([]int, n)
	var routes []string
	for i := range n {
		clusterPorts[i] = FreePort(tb)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i]))
	}
	for i := range n {
		dir := tb.TempDir()
		node := &ClusterNode{Name: fmt.Sprintf("n%d", i+1), bin: bin, port: FreePort(tb), conf: filepath.Join(dir, "server.conf"), owner: c}
		conf := fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster {
  name: evo
  listen: 127.0.0.1:%d
  routes: [%s]
}
`, node.Name, node.port, filepath.Join(dir, "js"), clusterPorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(node.conf, []byte(conf), 0o644); err != nil {
			tb.Fatal(err)
		}
		c.Nodes = append(c.Nodes, node)
	}
	tb.Cleanup(c.Stop)
	for _, node := range c.Nodes {
		node.Start()
	}
	for _, node := range c.Nodes {
		node.waitJetStream()
	}
	return c
}

// URLs is every node's client URL, comma-separated.
func (c *NATSCluster) URLs() string {
	var u []string
	for _, n := range c.Nodes {
		u = append(u, n.URL())
	}
	return strings.Join(u, ",")
}

// Node returns the node of the given server name, or nil.
func (c *NATSCluster) Node(name string) *ClusterNode {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Stop stops every node.
func (c *NATSCluster) Stop() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}

// URL is the node's client URL.
func (n *ClusterNode) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// Start starts the node (again) and waits until it accepts clients.
func (n *ClusterNode) Start() {
	tb := n.owner.tb
	tb.Helper()
	n.cmd = exec.Command(n.bin, "-c", n.conf)
	if testing.Verbose() {
		n.cmd.Stdout, n.cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := n.cmd.Start(); err != nil {
		tb.Fatalf("start nats-server %s: %v", n.Name, err)
	}
	n.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(n.cmd, n.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(n.URL(), nats.Timeout(time.Second))
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("nats-server %s on %s not ready: %v", n.Name, n.URL(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitJetStream waits until JetStream answers through the node (the
// cluster has a meta leader).
func (n *ClusterNode) waitJetStream() {
	tb := n.owner.tb
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(n.URL(), nats.Timeout(time.Second))
		if err == nil {
			js, _ := jetstream.New(nc)
			_, err = js.AccountInfo(tb.Context())
			nc.Close()
			if err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("JetStream through %s not ready: %v", n.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill SIGKILLs the node and waits until it is gone.
func (n *ClusterNode) Kill() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	select {
	case <-n.done:
	default:
		n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
	n.cmd = nil
}
