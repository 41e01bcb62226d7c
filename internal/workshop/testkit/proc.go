package testkit

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Proc is a command run as a child process that a test can SIGKILL, stop
// and start again with the same arguments and environment. Its output, of
// every run, is in Output.
type Proc struct {
	Name string
	tb   testing.TB
	bin  string
	args []string
	env  []string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // of the last run, once done is closed

	Output SyncBuffer
}

// StartProc starts bin with args, its environment env (nil: the test's),
// named name in failures; it is SIGKILLed when the test ends if still
// running.
func StartProc(tb testing.TB, name string, env []string, bin string, args ...string) *Proc {
	tb.Helper()
	p := &Proc{Name: name, tb: tb, bin: bin, args: args, env: env}
	p.Start()
	tb.Cleanup(p.Kill)
	return p
}

// Start starts the process (again).
func (p *Proc) Start() {
	p.tb.Helper()
	if p.Running() {
		p.tb.Fatalf("%s: started while running", p.Name)
	}
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = &p.Output, &p.Output
	fmt.Fprintf(&p.Output, "--- start %s\n", p.Name)
	if err := p.cmd.Start(); err != nil {
		p.tb.Fatalf("start %s: %v", p.Name, err)
	}
	done := make(chan struct{})
	p.done = done
	go func(c *exec.Cmd) {
		err := c.Wait()
		p.err = err
		close(done)
	}(p.cmd)
}

// Running tells whether the process is running.
func (p *Proc) Running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Exited tells whether the process has exited (false while it runs), and
// with what error (nil: exit status 0).
func (p *Proc) Exited() (bool, error) {
	if p.Running() {
		return false, nil
	}
	if p.done == nil {
		return true, nil
	}
	return true, p.err
}

// Kill SIGKILLs the process and waits until it is gone.
func (p *Proc) Kill() {
	if !p.Running() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	fmt.Fprintf(&p.Output, "--- SIGKILLed %s\n", p.Name)
}

// Stop sends SIGTERM and waits for the exit, at most timeout (then the
// test fails); it returns the process's error (nil: exit status 0).
func (p *Proc) Stop(timeout time.Duration) error {
	p.tb.Helper()
	if !p.Running() {
		_, err := p.Exited()
		return err
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		p.tb.Fatalf("%s did not exit within %s of SIGTERM; its output:\n%s", p.Name, timeout, p.Output.String())
		return nil
	}
}
