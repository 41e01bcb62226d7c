package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/otlpin"
	"github.com/evosignal/evosignal/internal/workshop/testkit"
)

// The tests of this file are rows of issue 28's OTLP table measured on the
// real ingester: cmd/ingest built and run as its own process at the
// default settings (embedded nats-server, DuckDB, the query service), fed
// over HTTP, its peak RSS read from the kernel.

// maxIngesterRSS is the most RSS the ingester may reach under them.
const maxIngesterRSS = 3 << 29 // 1.5 GiB

// ingesterProc is a running cmd/ingest with -otlp and -http.
type ingesterProc struct {
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
	otlp   string // http://…/v1/traces
}

// startIngester runs cmd/ingest with its defaults but the addresses, and
// waits until it receives traces.
func startIngester(t *testing.T) *ingesterProc {
	t.Helper()
	bin := testkit.BuildCmd(t, "./cmd/ingest")
	dir := t.TempDir()
	otlpAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	httpAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	p := &ingesterProc{stderr: &testkit.SyncBuffer{}, otlp: "http://" + otlpAddr + otlpin.Path}
	p.cmd = exec.Command(bin, "-db", filepath.Join(dir, "rss.duckdb"), "-listen", "127.0.0.1:0", "-otlp", otlpAddr, "-http", httpAddr)
	p.cmd.Env = testkit.DefaultEnv()
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for metric(httpAddr, `evosignal_ingest_messages_total{outcome="accepted"}`) < 0 || !strings.Contains(p.stderr.String(), "receiving OTLP/HTTP traces") {
		if time.Now().After(deadline) {
			t.Fatalf("the ingester did not start:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// stop interrupts the ingester, waits for it, and returns its peak RSS in
// bytes: VmHWM before the interrupt.
func (p *ingesterProc) stop(t *testing.T) int64 {
	t.Helper()
	hwm, err := testkit.PeakRSS(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(os.Interrupt)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("ingester after SIGINT: %v\n%s", err, p.stderr.String())
	}
	// Not ru_maxrss: the child of a vfork+exec has the test process's own
	// peak in it (a race-built test binary after many tests: 900 MiB).
	t.Logf("ingester VmHWM before stop %d MiB", hwm>>20)
	return hwm
}

// stopCount is a count of the ingester's "otlp receiver stopped" line.
func (p *ingesterProc) stopCount(t *testing.T, name string) int {
	t.Helper()
	m := regexp.MustCompile(`msg="otlp receiver stopped".* ` + name + `=(\d+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no %s on the receiver's stop line:\n%s", name, p.stderr.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// toolSpans is an export of n traces from trace first on, each of one
// execute_tool span carrying args as gen_ai.tool.call.arguments and no
// agent span: their run never ends, so the receiver buffers them.
func toolSpans(first uint64, n int, args string) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "rss-test")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	t0 := pcommon.NewTimestampFromTime(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	for i := range uint64(n) {
		sp := ss.AppendEmpty()
		var tid pcommon.TraceID
		tid[0] = 2
		binary.BigEndian.PutUint64(tid[8:], first+i)
		sp.SetTraceID(tid)
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
		sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 9})
		sp.SetName("execute_tool Read")
		sp.SetStartTimestamp(t0 + pcommon.Timestamp(i))
		sp.SetEndTimestamp(t0 + pcommon.Timestamp(i) + 1000)
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "execute_tool")
		a.PutStr("gen_ai.tool.name", "Read")
		a.PutStr("gen_ai.tool.call.arguments", args)
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return body
}

// post sends body and returns the status and Retry-After; a request the
// server answered by closing the connection has status -1.
func post(to string, body []byte) (int, string) {
	res, err := http.Post(to, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return -1, ""
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// postUntilTaken sends body as an exporter does: a 503 is retried after
// its Retry-After, until taken or deadline. It returns the status and the
// number of retries.
func postUntilTaken(to string, body []byte, deadline time.Time) (status, retries int) {
	for {
		st, retry := post(to, body)
		if (st != http.StatusServiceUnavailable && st != -1) || time.Now().After(deadline) {
			return st, retries
		}
		wait, _ := strconv.Atoi(retry)
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
		retries++
	}
}

// megabyteArgs is 1 MB of tool arguments.
var megabyteArgs = `{"blob":"` + strings.Repeat("x", 1<<20) + `"}`

// TestIngesterRSSToolSpansNoAgent (row 1): 2,000 tool spans of 1 MB
// arguments in traces that never end, from four exporters at once, keep the
// ingester under maxIngesterRSS at the defaults; the buffer drops the
// oldest traces (the old code held them all: 3,000 spans, 3.09 GB).
func TestIngesterRSSToolSpansNoAgent(t *testing.T) {
	p := startIngester(t)
	const spans, per, exporters = 2000, 10, 4
	deadline := time.Now().Add(2 * time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	retries := 0
	t0 := time.Now()
	for e := range exporters {
		wg.Go(func() {
			for i := e * per; i < spans; i += exporters * per {
				st, r := postUntilTaken(p.otlp, toolSpans(uint64(i+1), per, megabyteArgs), deadline)
				mu.Lock()
				retries += r
				mu.Unlock()
				if st != http.StatusOK {
					t.Errorf("POST of spans %d-%d: %d, want 200", i+1, i+per, st)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	peak := p.stop(t)
	evicted, spansIn := p.stopCount(t, "evicted"), p.stopCount(t, "spans")
	t.Logf("row 1: %d spans of 1 MB arguments (%d requests of %d, %d exporters, %d retried after 503) in %s: %d traces evicted; peak RSS %d MiB",
		spans, spans/per, per, exporters, retries, took.Round(time.Millisecond), evicted, peak>>20)
	if spansIn != spans || evicted == 0 {
		t.Errorf("the receiver took %d spans and evicted %d traces; want %d spans and evictions", spansIn, evicted, spans)
	}
	if peak > maxIngesterRSS {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", peak>>20, maxIngesterRSS>>20)
	}
}

// TestIngesterRSSConcurrentRequests (row 4): 64 requests of 14.9 MB sent at
// once: past -otlp-max-requests they are refused with 503 and Retry-After
// before their body is read, the exporters retry, every request is taken
// in the end, and the ingester stays under maxIngesterRSS at the defaults
// (the old code took all 64 at once: peak 5.2 GB). What fails here without
// the in-flight limit is the refusals: with -otlp-max-requests 64 and the
// buffer unbounded the same load peaked at 1336 MiB on a 2-core machine,
// the requests not all at their peak at once.
func TestIngesterRSSConcurrentRequests(t *testing.T) {
	p := startIngester(t)
	const clients = 64
	args := `{"blob":"` + strings.Repeat("x", 1_066_000) + `"}`
	bodies := make([][]byte, clients)
	for i := range bodies {
		bodies[i] = toolSpans(uint64(i*14+1), 14, args)
	}
	first := make([]int, clients)
	final := make([]int, clients)
	retried := make([]int, clients)
	deadline := time.Now().Add(2 * time.Minute)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			<-start
			st, retry := post(p.otlp, bodies[i])
			first[i] = st
			if st == http.StatusServiceUnavailable && retry == "" {
				t.Errorf("request %d: 503 without Retry-After", i)
			}
			final[i] = st
			// -1: the 503 came while the body was still being sent and the
			// server closed the connection (it refuses before reading);
			// the client saw the reset, as an exporter may, and retries.
			if st == http.StatusServiceUnavailable || st == -1 {
				time.Sleep(time.Second)
				final[i], retried[i] = postUntilTaken(p.otlp, bodies[i], deadline)
				retried[i]++
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(t0)
	peak := p.stop(t)
	taken, refused, retries := 0, 0, 0
	for i := range clients {
		switch first[i] {
		case http.StatusOK:
			taken++
		case http.StatusServiceUnavailable, -1:
			refused++
		default:
			t.Errorf("request %d at first: %d, want 200, or 503 (or the connection closed mid-upload)", i, first[i])
		}
		if final[i] != http.StatusOK {
			t.Errorf("request %d in the end: %d, want 200", i, final[i])
		}
		retries += retried[i]
	}
	busy := p.stopCount(t, "busy")
	t.Logf("row 4: %d requests of %.1f MB at once: %d taken, %d refused with 503 (%d retries in all, %d busy on the stop line, all taken after %s); peak RSS %d MiB",
		clients, float64(len(bodies[0]))/1e6, taken, refused, retries, busy, took.Round(time.Millisecond), peak>>20)
	if refused == 0 {
		t.Errorf("no request was refused, want those past -otlp-max-requests (%d)", otlpin.DefaultMaxRequests)
	}
	if peak > maxIngesterRSS {
		t.Errorf("peak RSS %d MiB, want at most %d MiB", peak>>20, maxIngesterRSS>>20)
	}
}
