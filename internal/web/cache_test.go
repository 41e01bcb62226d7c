package web

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCache: one computation a key and data version while it is fresh,
// shared by requests that arrive meanwhile; a new version, an expired
// entry or an error computes again; the bound holds.
func TestCache(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	c := newCache(time.Minute, 3)
	c.now = func() time.Time { return now }
	var builds atomic.Int64
	build := func(v string) func() (any, error) {
		return func() (any, error) {
			builds.Add(1)
			time.Sleep(10 * time.Millisecond)
			return v, nil
		}
	}
	get := func(key, version string) any {
		t.Helper()
		v, err := c.get(key, version, build(key+"@"+version))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, _ := c.get("a", "1", build("a@1")); v != "a@1" {
				t.Errorf("got %v", v)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("8 requests at once built %d times, want 1", n)
	}
	if get("a", "2") != "a@2" || builds.Load() != 2 {
		t.Errorf("a new data version did not compute again (%d builds)", builds.Load())
	}
	now = now.Add(time.Minute)
	if get("a", "2"); builds.Load() != 3 {
		t.Errorf("an entry a minute old served again (%d builds)", builds.Load())
	}
	if _, err := c.get("e", "2", func() (any, error) { return nil, errors.New("down") }); err == nil {
		t.Error("the error was not returned")
	}
	if get("e", "2") != "e@2" {
		t.Error("an error was kept")
	}
	for _, k := range []string{"b", "c", "d", "f"} {
		get(k, "2")
	}
	if len(c.m) > 3 {
		t.Errorf("%d entries, bound 3", len(c.m))
	}
}
