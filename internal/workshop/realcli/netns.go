package realcli

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"
)

// Namespace is a network namespace with nothing but loopback, held by one
// OS thread: a listener opened there and the processes started there see
// only each other, so a client that misses a switch and calls out fails
// at once instead of reaching the Internet. It needs CAP_SYS_ADMIN (root,
// as in CI); the test fails when that is missing.
//
// Linux gives a namespace to a thread, not a process: the namespace lives
// on a goroutine locked to its thread and never unlocked (Go ends such a
// thread with its goroutine, so no other goroutine ever runs in the
// namespace), and every listen and process start is handed to it. Sockets
// keep their namespace, so the server's connections are served by any
// goroutine; and the Go runtime starts new threads from a clean template
// thread, never from this one.
type Namespace struct {
	do   chan func()
	done chan struct{}
}

// NewNamespace makes a network namespace with loopback up.
func NewNamespace() (*Namespace, error) {
	ns := &Namespace{do: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		defer close(ns.done)
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			ready <- fmt.Errorf("unshare the network namespace (needs CAP_SYS_ADMIN): %w", err)
			return
		}
		if err := loopbackUp(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for f := range ns.do {
			f()
		}
	}()
	if err := <-ready; err != nil {
		<-ns.done
		return nil, err
	}
	return ns, nil
}

// run runs f on the namespace's thread.
func (ns *Namespace) run(f func()) {
	finished := make(chan struct{})
	ns.do <- func() { defer close(finished); f() }
	<-finished
}

// Listen opens a TCP listener on a free port of 127.0.0.1 inside the
// namespace.
func (ns *Namespace) Listen() (net.Listener, error) {
	var l net.Listener
	var err error
	ns.run(func() { l, err = net.Listen("tcp", "127.0.0.1:0") })
	if err != nil {
		return nil, fmt.Errorf("listen in the namespace: %w", err)
	}
	return l, nil
}

// DialContext opens a connection from inside the namespace, to a listener
// opened there with Listen (an http.Transport's DialContext): a client in
// the test process reaching a server only the namespace sees.
func (ns *Namespace) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	var err error
	ns.run(func() { c, err = (&net.Dialer{}).DialContext(ctx, network, addr) })
	if err != nil {
		return nil, fmt.Errorf("dial in the namespace: %w", err)
	}
	return c, nil
}

// Start starts cmd inside the namespace (cmd.Wait may be called from
// anywhere).
func (ns *Namespace) Start(cmd *exec.Cmd) error {
	var err error
	ns.run(func() { err = cmd.Start() })
	return err
}

// Close ends the namespace's thread, and with it the namespace once the
// listeners and processes in it are gone.
func (ns *Namespace) Close() {
	close(ns.do)
	<-ns.done
}

// ifreq is Linux's struct ifreq as SIOCGIFFLAGS and SIOCSIFFLAGS use it:
// the interface's name, then its flags in the union.
type ifreq struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// loopbackUp sets lo up in the calling thread's network namespace (a new
// one has it down).
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket to set lo up: %w", err)
	}
	defer syscall.Close(fd)
	var ifr ifreq
	copy(ifr.name[:], "lo")
	if err := ioctl(fd, syscall.SIOCGIFFLAGS, &ifr); err != nil {
		return fmt.Errorf("read the flags of lo: %w", err)
	}
	ifr.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if err := ioctl(fd, syscall.SIOCSIFFLAGS, &ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

func ioctl(fd int, req uintptr, ifr *ifreq) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(ifr))); errno != 0 {
		return errno
	}
	return nil
}
