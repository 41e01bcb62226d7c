// Package rules carries the learned hint rules (agent/ruleset) through a
// NATS JetStream key-value bucket: Publish, used by `analyze rules -publish`
// and the demo, puts a rule set under each agent's name and the one learned
// from every agent under ruleset.GlobalKey; a Watcher gives an agent its
// rules when it starts and keeps them current:
//
//	w, err := rules.Watch(ctx, js, ruleset.DefaultBucket, "skilllite")
//	if err != nil { … }                    // errors.Is(err, jetstream.ErrBucketNotFound): nothing published yet
//	defer w.Close()
//	…
//	p, err := planner.New(session, planner.Config{Tools: tools, Rules: w.Current()}) // at each session start
//
// The agent's own key beats ruleset.GlobalKey: Current returns the agent's rule set
// when its key holds one, else the global one, else no rules. The planner
// records the version and the rule ids in agent.session.started and applies
// the rules to every plan (planner.SanitizeAndEnhance).
//
// Like the rest of package agent, it never logs: a value that is not a valid
// rule set is reported by Err, and the last good rule set of that key stays
// in force.
package rules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/ruleset"
)

// Watcher holds the current rule set of one agent and follows its updates.
// It owns one goroutine, which Close stops and waits for. Its methods are
// safe for concurrent use.
type Watcher struct {
	key    string // the agent's key
	kw     jetstream.KeyWatcher
	cancel context.CancelFunc
	done   chan struct{} // the goroutine exited

	mu      sync.Mutex
	sets    map[string]ruleset.RuleSet // the last valid rule set of each key
	changed chan struct{}              // closed at the next update
	err     error                      // the last value that did not parse, per Err
}

// Watch loads the rule sets of agentName and ruleset.GlobalKey from bucket and
// follows their updates until Close. ctx bounds the initial load only.
//
// It returns an error wrapping jetstream.ErrBucketNotFound when the bucket
// does not exist (no rules were ever published; an agent may run without
// rules and try again later), and an error when agentName cannot be a key.
func Watch(ctx context.Context, js jetstream.JetStream, bucket, agentName string) (*Watcher, error) {
	if _, err := ruleset.Key(agentName); err != nil {
		return nil, fmt.Errorf("watch rules: %w", err)
	}
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("watch rules: open bucket %s: %w", bucket, err)
	}
	// The key watcher's subscription lives as long as the context it is
	// given: the watcher's own, cancelled by Close (or by ctx while the
	// initial load is still running).
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	keys := []string{agentName}
	if agentName != ruleset.GlobalKey {
		keys = append(keys, ruleset.GlobalKey)
	}
	kw, err := kv.WatchFiltered(wctx, keys)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch rules: watch %s in bucket %s: %w", keys, bucket, err)
	}
	w := &Watcher{
		key:     agentName,
		kw:      kw,
		cancel:  cancel,
		done:    make(chan struct{}),
		sets:    map[string]ruleset.RuleSet{},
		changed: make(chan struct{}),
	}
	// The initial values come first, then a nil entry.
	for loaded := false; !loaded; {
		select {
		case e, ok := <-kw.Updates():
			if !ok {
				cancel()
				return nil, fmt.Errorf("watch rules in bucket %s: watcher stopped during the initial load: %w", bucket, errors.Join(ctx.Err(), errStopped))
			}
			if e == nil {
				loaded = true
				continue
			}
			w.apply(e)
		case <-ctx.Done():
			cancel()
			kw.Stop()
			return nil, fmt.Errorf("watch rules in bucket %s: initial load: %w", bucket, ctx.Err())
		}
	}
	go w.follow()
	return w, nil
}

var errStopped = errors.New("key watcher closed")

// follow applies updates until the key watcher's channel closes (Close, or
// the connection closed).
func (w *Watcher) follow() {
	defer close(w.done)
	for e := range w.kw.Updates() {
		if e != nil {
			w.apply(e)
		}
	}
}

// apply records one entry: a put replaces the key's rule set when it is
// valid; a delete or purge removes it.
func (w *Watcher) apply(e jetstream.KeyValueEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e.Operation() {
	case jetstream.KeyValuePut:
		rs, err := ruleset.Parse(e.Value())
		if err != nil {
			w.err = fmt.Errorf("key %s revision %d: %w", e.Key(), e.Revision(), err)
			return // the last good rule set of the key stays
		}
		w.sets[e.Key()] = rs
	default:
		delete(w.sets, e.Key())
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// Current returns the rule set in force for the agent: its own key's when
// it holds a valid rule set, else ruleset.GlobalKey's, else an empty RuleSet (no
// version, no rules). The result is a copy.
func (w *Watcher) Current() ruleset.RuleSet {
	rs, _ := w.CurrentKey()
	return rs
}

// CurrentKey is Current and the key it came from ("" for no rules).
func (w *Watcher) CurrentKey() (ruleset.RuleSet, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range []string{w.key, ruleset.GlobalKey} {
		if rs, ok := w.sets[k]; ok {
			rs.Rules = slices.Clone(rs.Rules)
			return rs, k
		}
	}
	return ruleset.RuleSet{}, ""
}

// Changed returns a channel that is closed at the next update the watcher
// applies (to either key), so that a caller can wait for a new rule set:
// take the channel, check Current, then wait on the channel.
func (w *Watcher) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// Err returns the most recent problem with a published value (one that is
// not a valid rule set), nil when there was none.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close stops following updates and waits for the watcher's goroutine.
// Current keeps returning the last rule set. Safe to call more than once.
func (w *Watcher) Close() error {
	err := w.kw.Stop()
	w.cancel()
	<-w.done
	if errors.Is(err, nats.ErrBadSubscription) || errors.Is(err, nats.ErrConnectionClosed) {
		err = nil // already stopped: a second Close, or the connection closed
	}
	if err != nil {
		return fmt.Errorf("stop rules watcher: %w", err)
	}
	return nil
}
