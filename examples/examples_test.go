// Package examples_test runs the agents in other languages under examples/:
// the JavaScript agent publishes to a real running ingester, the Python
// one's output is checked against the contract by the validate command.
// node, npm's packages (npm ci in examples/js) and python3 are installed by
// scripts/setup; the JavaScript test fails when they are missing, the
// Python test fails in CI (CI=true) and elsewhere skips, saying why.
package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/app/validate"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/pipeline"
)

// sessionEvents is how many events each example's session has.
const sessionEvents = 15

func lookPath(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		tb.Fatalf("%s is not installed (scripts/setup installs it): %v", name, err)
	}
	return p
}

// The JavaScript agent publishes one session with nats.js to the embedded
// server on a loopback TCP port; the ingester stores all of it and
// dead-letters nothing.
func TestJavaScriptAgent(t *testing.T) {
	node := lookPath(t, "node")
	if _, err := os.Stat(filepath.Join("js", "node_modules", "@nats-io", "jetstream")); err != nil {
		t.Fatalf("examples/js has no node_modules (scripts/setup runs npm ci there): %v", err)
	}
	dir := t.TempDir()
	cfg := pipeline.DefaultConfig()
	cfg.DB = filepath.Join(dir, "evo.duckdb")
	cfg.Server = bus.ServerConfig{Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "jetstream")} // a free loopback TCP port
	cfg.Ingest.FlushInterval = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	const session = "js-example-session"
	cmd := exec.CommandContext(ctx, node, "agent.mjs", session)
	cmd.Dir = "js"
	cmd.Env = append(os.Environ(), "NATS_URL="+p.ClientURL())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node agent.mjs: %v\n%s", err, out)
	}
	t.Logf("node agent.mjs: %s", bytes.TrimSpace(out))
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}

	db := p.Store().DB()
	var stored, sessions int
	var outcome string
	var dead int
	var reasons string
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE session = ?", session).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*), coalesce(string_agg(reason_code || ': ' || reason, '; '), '') FROM dead_letters").Scan(&dead, &reasons); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*), coalesce(any_value(outcome), '') FROM sessions WHERE session = ?", session).Scan(&sessions, &outcome); err != nil {
		t.Fatal(err)
	}
	if stored != sessionEvents || dead != 0 || sessions != 1 || outcome != "success" {
		t.Fatalf("after the JavaScript agent: %d events of %s, %d dead letters (%s), %d sessions with outcome %q; want %d, 0, 1, \"success\"",
			stored, session, dead, reasons, sessions, outcome, sessionEvents)
	}
	// One subject, the source's token subject, as the Go publisher's.
	var subjects int
	var source, subject string
	if err := db.QueryRowContext(ctx, "SELECT count(DISTINCT subject), any_value(source), any_value(subject) FROM events WHERE session = ?", session).Scan(&subjects, &source, &subject); err != nil {
		t.Fatal(err)
	}
	if want := events.SourceSubject("evo", source); subjects != 1 || subject != want {
		t.Fatalf("the JavaScript agent published on %d subjects, %s; want one, %s", subjects, subject, want)
	}
	var replans int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM replans WHERE session = ? AND valid", session).Scan(&replans); err != nil {
		t.Fatal(err)
	}
	if replans != 1 {
		t.Fatalf("valid replans of %s = %d, want 1", session, replans)
	}

	// Under a rule set with a holdout, the JavaScript agent draws each
	// session's arm as agent/ruleset.Assign does: the same arm for the
	// same version and session id, in another language.
	rs := ruleset.RuleSet{Version: "rs-js-holdout", Holdout: 0.5, Rules: []ruleset.Rule{{ID: "prefer:bugfix:read_file", Kind: ruleset.KindPrefer, TaskType: "bugfix", ToolHint: "read_file"}}}
	b, _ := json.Marshal(rs)
	rsFile := filepath.Join(dir, "ruleset.json")
	if err := os.WriteFile(rsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 12 {
		id := fmt.Sprint("js-holdout-", i)
		cmd := exec.CommandContext(ctx, node, "agent.mjs", id)
		cmd.Dir = "js"
		cmd.Env = append(os.Environ(), "NATS_URL="+p.ClientURL(), "RULESET="+rsFile)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("RULESET=%s node agent.mjs %s: %v\n%s", rsFile, id, err, out)
		}
		want[id] = ruleset.Assign(rs.Version, id, rs.Holdout)
	}
	if _, err := p.WaitIngested(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT a.session, a.arm, a.holdout, a.unit, s.ruleset FROM session_assignments a JOIN session_starts s USING (session) WHERE a.session LIKE 'js-holdout-%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	arms := map[string]int{}
	for rows.Next() {
		var id, arm, unit string
		var h float64
		var set sql.NullString
		if err := rows.Scan(&id, &arm, &h, &unit, &set); err != nil {
			t.Fatal(err)
		}
		if arm != want[id] || h != 0.5 || unit != "session" || (arm == "rules") != (set.String == rs.Version) {
			t.Errorf("%s: arm %s (ruleset %q), holdout %v, unit %s; want arm %s, the rule set only in the rules arm", id, arm, set.String, h, unit, want[id])
		}
		arms[arm]++
		delete(want, id)
	}
	if len(want) != 0 || arms["rules"] == 0 || arms["holdout"] == 0 {
		t.Errorf("sessions without an assignment %v, arms %v: want all 12 stored, in both arms", want, arms)
	}
}

// needInCI returns the path of the program name; where it is missing the
// test fails in CI (CI=true, where scripts/setup installs it) and skips
// elsewhere, saying so.
func needInCI(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not installed, and CI=true requires it (scripts/setup installs it): %v", name, err)
	}
	tb.Skipf("SKIPPED: %s is not installed (scripts/setup installs it; in CI, CI=true, this test fails instead): %v", name, err)
	return ""
}

// The Python example writes one session that the validate command accepts
// (every line, against the contract), with its events numbered in order.
func TestPythonExample(t *testing.T) {
	python := needInCI(t, "python3")
	out, err := exec.CommandContext(t.Context(), python, filepath.Join("python", "agent.py"), "py-example-session").Output()
	if err != nil {
		t.Fatalf("python3 agent.py: %v", err)
	}

	// evosignal validate, on the output as its standard input.
	var vout, verr bytes.Buffer
	if code := validate.Main(t.Context(), []string{"-"}, bytes.NewReader(out), &vout, &verr); code != 0 || vout.Len() != 0 {
		t.Fatalf("python3 agent.py | evosignal validate: exit status %d, want 0:\n%s%s", code, vout.String(), verr.String())
	}
	if got, want := strings.TrimSpace(verr.String()), strconv.Itoa(sessionEvents)+" events valid"; got != want {
		t.Fatalf("python3 agent.py | evosignal validate said %q, want %q", got, want)
	}

	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v\n%s", n, err, sc.Bytes())
		}
		if e.Seq != int64(n) || e.Subject != "py-example-session" {
			t.Fatalf("line %d: seq %d of session %q, want %d of py-example-session", n, e.Seq, e.Subject, n)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != sessionEvents {
		t.Fatalf("python3 agent.py wrote %d events, want %d", n, sessionEvents)
	}

	// Its subject function computes the Go publisher's subjects, the
	// schema's test vector among them.
	for _, source := range []string{"skilllite/host-a/worker-3", "pyagent/höst/w~1", "a"} {
		cmd := exec.CommandContext(t.Context(), python, "-c", "import sys, agent; print(agent.subject(sys.argv[1]))", source)
		cmd.Dir = "python"
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1") // no __pycache__ in the tree
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("python3 agent.subject(%q): %v", source, err)
		}
		if got, want := strings.TrimSpace(string(out)), events.SourceSubject("evo", source); got != want {
			t.Errorf("python3 agent.subject(%q) = %s, want %s", source, got, want)
		}
	}
	if got := events.SourceSubject("evo", "skilllite/host-a/worker-3"); got != "evo.skilllite.331df221" {
		t.Errorf("SourceSubject of the schema's test vector = %s, want evo.skilllite.331df221", got)
	}

	// Its arm function draws the arms agent/ruleset.Assign draws.
	var units []string
	for i := range 200 {
		units = append(units, fmt.Sprint("py-holdout-", i))
	}
	for _, share := range []float64{0.1, 0.5} {
		cmd := exec.CommandContext(t.Context(), python, append([]string{"-c",
			"import sys, agent; print('\\n'.join(agent.arm('rs-py', u, float(sys.argv[1])) for u in sys.argv[2:]))", fmt.Sprint(share)}, units...)...)
		cmd.Dir = "python"
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("python3 agent.arm(…, %v): %v", share, err)
		}
		got := strings.Fields(string(out))
		if len(got) != len(units) {
			t.Fatalf("python3 agent.arm printed %d arms for %d units", len(got), len(units))
		}
		held := 0
		for i, unit := range units {
			want := ruleset.Assign("rs-py", unit, share)
			if got[i] != want {
				t.Fatalf("python3 agent.arm(%q, %v) = %s, want %s", unit, share, got[i], want)
			}
			if want == ruleset.ArmHoldout {
				held++
			}
		}
		if held == 0 || held == len(units) {
			t.Errorf("share %v: %d of %d units held out: the check sees one arm only", share, held, len(units))
		}
	}
	// And its sessions under a rule set with a holdout pass the contract.
	rsFile := filepath.Join(t.TempDir(), "ruleset.json")
	b, _ := json.Marshal(ruleset.RuleSet{Version: "rs-py", Holdout: 0.5, Rules: []ruleset.Rule{{ID: "prefer:bugfix:read_file", Kind: ruleset.KindPrefer, TaskType: "bugfix", ToolHint: "read_file"}}})
	if err := os.WriteFile(rsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python, filepath.Join("python", "agent.py"), "py-holdout-1")
	cmd.Env = append(os.Environ(), "RULESET="+rsFile)
	line, err := cmd.Output()
	if err != nil {
		t.Fatalf("RULESET=… python3 agent.py: %v", err)
	}
	first, _, _ := bytes.Cut(line, []byte("\n"))
	e, err := events.Decode(first)
	if err != nil {
		t.Fatalf("the first event under a holdout: %v\n%s", err, first)
	}
	d, _ := e.Payload()
	if a := d.(*events.SessionStartedData).Assignment; a == nil || string(a.Arm) != ruleset.Assign("rs-py", "py-holdout-1", 0.5) {
		t.Errorf("assignment %+v, want the arm Assign draws", a)
	}
}
