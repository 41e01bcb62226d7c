package scaletest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/workshop/synth"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// lakeSpec is the lake the test's ingesters seal into and its analyzers
// read: the flags and the environment of every command on it.
type lakeSpec struct {
	ingest  []string // ingest's flags (which create the lake when missing)
	analyze []string // analyze's
	env     []string // every command's environment
}

// remoteLake is a lake beyond one machine: its catalog in a PostgreSQL
// server and its warehouse in a bucket of an S3 server, both started for
// the test; the analyzers cache the files they read in a directory of
// the test.
func remoteLake(t *testing.T) lakeSpec {
	s3 := testkit.StartS3(t, "lake")
	pg := testkit.StartPostgres(t)
	return lakeSpec{
		ingest:  []string{"-lake", pg, "-lake-warehouse", "s3://lake/evo"},
		analyze: []string{"-lake", pg, "-lake-cache", t.TempDir()},
		env:     append(os.Environ(), s3.Env()...),
	}
}

// binaries are the commands the tests run, built from this module.
type binaries struct{ ingest, analyze string }

func build(t *testing.T) binaries {
	return binaries{ingest: testkit.BuildCmd(t, "./cmd/ingest"), analyze: testkit.BuildCmd(t, "./cmd/analyze")}
}

// journal publishes synthetic sessions and writes every event it sends, as
// a JSON line, to its file: the events `ingest -file` loads into the
// database the lake is compared with.
type journal struct {
	path string
	f    *os.File
	mu   sync.Mutex
	w    *bufio.Writer
	next agent.Sink
	sent atomic.Int64
}

func newJournal(t *testing.T, path string) *journal {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &journal{path: path, f: f, w: bufio.NewWriter(f)}
}

// Send writes e to the file and publishes it.
func (j *journal) Send(ctx context.Context, e *events.Event) error {
	b, err := e.MarshalJSON()
	if err != nil {
		return err
	}
	j.mu.Lock()
	j.w.Write(b)
	err = j.w.WriteByte('\n')
	j.mu.Unlock()
	if err != nil {
		return err
	}
	j.sent.Add(1)
	return j.next.Send(ctx, e)
}

// publish publishes gen's sessions through an agent.Publisher on js until
// at least n more events were sent, at most rate events a second (0: as
// fast as they go), and waits for JetStream's acknowledgement of each.
func (j *journal) publish(ctx context.Context, js jetstream.JetStream, gen *synth.Generator, n int64, rate float64) error {
	pub, err := agent.NewPublisher(js, agent.PublisherConfig{AckTimeout: 2 * time.Second, Retries: 100})
	if err != nil {
		return err
	}
	j.next = pub
	t0, from := time.Now(), j.sent.Load()
	for j.sent.Load()-from < n {
		if _, err := gen.Session(ctx, j); err != nil {
			pub.Close(context.WithoutCancel(ctx))
			return err
		}
		if rate <= 0 {
			continue
		}
		if ahead := time.Duration(float64(j.sent.Load()-from)/rate*float64(time.Second)) - time.Since(t0); ahead > 0 {
			select {
			case <-ctx.Done():
				pub.Close(context.WithoutCancel(ctx))
				return ctx.Err()
			case <-time.After(ahead):
			}
		}
	}
	if err := pub.Close(ctx); err != nil {
		return fmt.Errorf("publisher: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// caughtUp tells whether every durable consumer named has been delivered
// every message of its filter and has acked them all (an ingester acks a
// batch after committing it).
func caughtUp(ctx context.Context, js jetstream.JetStream, consumers ...string) bool {
	for _, name := range consumers {
		c, err := js.Consumer(ctx, "EVO", name)
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		if err != nil || info.NumPending != 0 || info.NumAckPending != 0 || info.Delivered.Stream == 0 {
			return false
		}
	}
	return true
}

// ackFloors is each consumer's ack floor (a stream sequence; 0 unknown).
func ackFloors(ctx context.Context, js jetstream.JetStream, consumers ...string) []uint64 {
	out := make([]uint64, len(consumers))
	for i, name := range consumers {
		if c, err := js.Consumer(ctx, "EVO", name); err == nil {
			if info, err := c.Info(ctx); err == nil {
				out[i] = info.AckFloor.Stream
			}
		}
	}
	return out
}

var generatedAt = regexp.MustCompile(`"generated_at": "[^"]*"`)

// analyze runs `analyze CMD SRC… -format json ARGS…` (SRC: -db FILE or the
// lake's flags) and returns its output, generated_at masked.
func analyze(bin string, env, src []string, cmd string, args ...string) (string, error) {
	c := exec.Command(bin, append(append(append([]string{cmd}, src...), "-format", "json"), args...)...)
	c.Env = env
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("analyze %s %s: %v\n%s", cmd, strings.Join(append(src, args...), " "), err, stderr.String())
	}
	return generatedAt.ReplaceAllString(string(out), `"generated_at": "(masked)"`), nil
}

// typedCounts counts the rows of the event log (and its distinct keys) and
// of every typed table.
const typedCounts = `SELECT (SELECT count(*) FROM events) AS events,
	(SELECT count(DISTINCT (source, id)) FROM events) AS distinct_events,
	(SELECT count(*) FROM session_starts) AS session_starts, (SELECT count(*) FROM session_ends) AS session_ends,
	(SELECT count(*) FROM plans) AS plans, (SELECT count(*) FROM plan_tasks) AS plan_tasks,
	(SELECT count(*) FROM replans) AS replans, (SELECT count(*) FROM replan_dropped) AS replan_dropped,
	(SELECT count(*) FROM hints_stripped) AS hints_stripped, (SELECT count(*) FROM tool_calls) AS tool_calls,
	(SELECT count(*) FROM task_completions) AS task_completions, (SELECT count(*) FROM depth_limits) AS depth_limits`

// analyses are the commands whose outputs over the lake must be those over
// one database of the same events: every analysis that reads a lake, the
// events' keys and the rows of every table.
var analyses = [][]string{
	{"replans"},
	{"replans", "-by", "agent"},
	{"hints", "-min-calls", "1"},
	{"mappings"},
	{"trend", "-every", "day"},
	{"effect"},
	{"rules"},
	{"sql", typedCounts},
	{"sql", "SELECT source, id, type, session, seq FROM events ORDER BY source, id"},
}

// factsDigest digests the stored facts the views read.
const factsDigest = `SELECT (SELECT count(*) || ':' || coalesce(sum(hash(f)), 0) FROM session_facts_stored f) AS session_facts,
	(SELECT count(*) || ':' || coalesce(sum(hash(f)), 0) FROM task_facts_stored f) AS task_facts,
	(SELECT count(*) FROM facts_pending) AS pending`

// snapshot are the commands that tell whether a lake's snapshot, as the
// analyzers see it, has changed: every table's rows, the events' keys, the
// stored facts, and analyses over the facts.
var snapshot = [][]string{
	{"sql", typedCounts},
	{"sql", "SELECT source, id, type, session, seq FROM events ORDER BY source, id"},
	{"sql", factsDigest},
	{"replans"},
	{"hints", "-min-calls", "1"},
}

// outputs runs every analysis over src.
func outputs(t *testing.T, bin string, env, src []string) map[string]string {
	t.Helper()
	return run(t, bin, env, src, analyses)
}

// run runs the commands over src, their outputs by command line.
func run(t *testing.T, bin string, env, src []string, commands [][]string) map[string]string {
	t.Helper()
	defer func(t0 time.Time) {
		t.Logf("the analyses over %s took %s", strings.Join(src, " "), time.Since(t0).Round(time.Millisecond))
	}(time.Now())
	out := map[string]string{}
	for _, a := range commands {
		o, err := analyze(bin, env, src, a[0], a[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.Join(a, " ")] = o
	}
	return out
}

// sameOutputs fails the test for every analysis whose output in got is not
// want's, byte for byte, showing where they part.
func sameOutputs(t *testing.T, got, want map[string]string, gotName, wantName string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs %s, %d %s", len(got), gotName, len(want), wantName)
	}
	for k, w := range want {
		g := got[k]
		if g == w {
			continue
		}
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		from := max(0, i-300)
		t.Errorf("analyze %s: %s (%d bytes) and %s (%d bytes) part at byte %d:\n%s: …%s…\n%s: …%s…",
			k, gotName, len(g), wantName, len(w), i, gotName, g[from:min(len(g), i+300)], wantName, w[from:min(len(w), i+300)])
	}
}

// loadFile builds one database of the journal's events with ingest -file.
func loadFile(t *testing.T, b binaries, j *journal, db string) {
	t.Helper()
	out, err := exec.Command(b.ingest, "-file", j.path, "-db", db, "-log-level", "warn").CombinedOutput()
	if err != nil {
		t.Fatalf("ingest -file %s: %v\n%s", j.path, err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// exactlyOnce checks that the lake holds every event of the journal once:
// as many rows and distinct (source, id)s as events sent, and the keys of
// the database loaded from the journal (compared by the outputs).
func exactlyOnce(t *testing.T, b binaries, lk lakeSpec, sent int64) {
	t.Helper()
	got, err := analyze(b.analyze, lk.env, lk.analyze, "sql", "SELECT count(*) AS n, count(DISTINCT (source, id)) AS keys FROM events")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"n": %d, "keys": %d`, sent, sent); !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
		t.Errorf("the lake's events: %s; want %s (every event sent, once)", got, want)
	}
}
