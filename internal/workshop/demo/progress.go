package demo

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints "simulated n/total sessions" on stderr at most once a
// second while a run is long.
type progress struct {
	w     io.Writer
	what  string
	total int

	mu   sync.Mutex
	done int
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func newProgress(w io.Writer, what string, total int) *progress {
	p := &progress{w: w, what: what, total: total, quit: make(chan struct{})}
	p.wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.mu.Lock()
				done := p.done
				p.mu.Unlock()
				fmt.Fprintf(p.w, "agentsim: %s %d/%d sessions\n", p.what, done, p.total)
			case <-p.quit:
				return
			}
		}
	})
	return p
}

func (p *progress) set(done int) {
	p.mu.Lock()
	p.done = max(p.done, done)
	p.mu.Unlock()
}

// stop ends the progress goroutine and waits for it; safe to call twice.
func (p *progress) stop() {
	p.once.Do(func() { close(p.quit) })
	p.wg.Wait()
}
