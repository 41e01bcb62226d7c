package ingest

import (
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// puller delivers a pull consumer's messages to the ingest loop one at a
// time, with a wait limit, as jetstream's MessagesContext.Next does, but
// through Consume: Next arms two timers for every message (its wait and the
// heartbeat check), garbage and work for the timer heap on every message;
// Consume resets one heartbeat timer, and the loop here one wait timer.
// What that saves: BENCHMARKS.md, "Figures behind the defaults".
type puller struct {
	cc    jetstream.ConsumeContext
	msgs  chan jetstream.Msg
	fail  chan error // the first terminal error
	done  chan struct{}
	stop  sync.Once
	timer *time.Timer
}

// errPullStopped is what next returns once the consumption stopped
// without an error of the stream's (Stop, or ctx done).
var errPullStopped = jetstream.ErrMsgIteratorClosed

// handed is how many delivered messages wait for next: a few, as the pull
// requests already keep maxMsgs coming (jetstream asks for more as the
// handler returns, so a full hand-over holds the pulls back).
const handed = 1024

// pull starts consuming cons with pull requests of up to maxMsgs messages.
func pull(cons jetstream.Consumer, maxMsgs int) (*puller, error) {
	p := &puller{
		msgs:  make(chan jetstream.Msg, handed),
		fail:  make(chan error, 1),
		done:  make(chan struct{}),
		timer: time.NewTimer(time.Hour),
	}
	p.timer.Stop()
	var err error
	p.cc, err = cons.Consume(func(m jetstream.Msg) {
		select {
		case p.msgs <- m:
		case <-p.done: // stopped: not taken, so read again later
		}
	},
		jetstream.PullMaxMessages(maxMsgs), jetstream.PullExpiry(5*time.Second),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if EndsConsume(err) {
				select {
				case p.fail <- err:
				default: // the first one is enough
				}
			}
		}))
	if err != nil {
		return nil, err
	}
	return p, nil
}

// EndsConsume says whether an error a Consume reports to its error
// handler ends the consumption (as MessagesContext.Next returns them); the
// others (a missed heartbeat, a leadership change) jetstream recovers from
// by pulling again.
func EndsConsume(err error) bool {
	return errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrBadRequest) ||
		errors.Is(err, jetstream.ErrConnectionClosed)
}

// Stop stops the consumption; next then returns errPullStopped. Safe to
// call more than once, from any goroutine.
func (p *puller) Stop() {
	p.stop.Do(func() {
		close(p.done)
		p.cc.Stop()
	})
}

// next returns the next message, waiting at most wait (0: no limit):
// nats.ErrTimeout when none came in time, a terminal error of the
// consumption, or errPullStopped once it stopped.
func (p *puller) next(wait time.Duration) (jetstream.Msg, error) {
	select { // stopped: nothing more, however much is buffered
	case <-p.done:
		return nil, errPullStopped
	default:
	}
	select { // what is buffered first, without touching the timer
	case m := <-p.msgs:
		return m, nil
	default:
	}
	var expired <-chan time.Time
	if wait > 0 {
		p.timer.Reset(wait)
		defer p.timer.Stop()
		expired = p.timer.C
	}
	select {
	case m := <-p.msgs:
		return m, nil
	case err := <-p.fail:
		return nil, err
	case <-p.done:
		return nil, errPullStopped
	case <-p.cc.Closed():
		return nil, errPullStopped
	case <-expired:
		return nil, nats.ErrTimeout
	}
}
