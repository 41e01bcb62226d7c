package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Retry runs JetStream set-up (stream, consumer) until it succeeds: a
// cluster electing a leader or missing a node answers with time-outs and
// "temporarily unavailable" for a while, and a restart during such a hiccup
// must wait it out, not exit. Only a permanent error (see Permanent) or the
// end of ctx ends the attempts early.
type Retry struct {
	// First and Max bound the wait between attempts, which doubles from
	// First up to Max. Zero values mean 250 ms and 5 s.
	First, Max time.Duration
	// OnRetry, when set, is called after each failed attempt that will be
	// retried, with its error and the wait before the next attempt: the
	// caller's hook to log and to report itself unhealthy meanwhile.
	OnRetry func(err error, wait time.Duration)
}

// Do calls fn until it returns nil or a permanent error, or ctx ends; then
// it returns ctx's error wrapped with fn's last one.
func (r Retry) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	wait, most := r.First, r.Max
	if wait <= 0 {
		wait = 250 * time.Millisecond
	}
	if most <= 0 {
		most = 5 * time.Second
	}
	for {
		err := fn(ctx)
		if err == nil || Permanent(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err)
		}
		if r.OnRetry != nil {
			r.OnRetry(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, most)
	}
}

// EnsureStream is EnsureStream retried.
func (r Retry) EnsureStream(ctx context.Context, js jetstream.JetStream, c StreamConfig) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := r.Do(ctx, func(ctx context.Context) (err error) {
		st, err = EnsureStream(ctx, js, c)
		return err
	})
	return st, err
}

// permanentCodes are JetStream API errors that waiting does not cure: the
// configuration is wrong, or JetStream is off.
var permanentCodes = map[jetstream.ErrorCode]bool{
	10039: true, // JetStream not enabled for the account
	10052: true, // invalid stream configuration
	10058: true, // stream name in use with another configuration
	10061: true, // replicas cannot be changed (this server)
	10065: true, // subjects overlap with another stream
	10074: true, // replicas > 1 on a server that is not clustered
	10076: true, // JetStream not enabled
}

// ErrConfig marks a configuration error of evosignal's own (a Validate
// failure): permanent.
var ErrConfig = errors.New("invalid configuration")

// Permanent says whether err is a configuration error that no retry cures:
// an invalid evosignal configuration (ErrConfig), a JetStream API error
// about the configuration or JetStream being off, a consumer of another
// database (ErrConsumerTaken), or a missing stream. Time-outs, "temporarily
// unavailable", no leader, no peers and connection errors are not.
func Permanent(err error) bool {
	if errors.Is(err, ErrConfig) || errors.Is(err, ErrConsumerTaken) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return true
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && permanentCodes[api.ErrorCode]
}
