// Package realotel runs real JavaScript agent frameworks (the Vercel AI
// SDK, the openai client under OpenInference, OpenLLMetry's Traceloop SDK,
// Strands Agents) headless against the scripted fake model server
// (internal/workshop/fakemodel, its Chat Completions API), each exporting
// its OpenTelemetry traces with the OpenTelemetry JS SDK over OTLP/HTTP:
// what they export is the fixtures and the test input of the OTel adapter
// (testdata/realotel). Every framework does the same task (Script), whose
// truth is counted by hand (ScriptTruth).
//
// The frameworks are pinned in npm/package.json (the one place their
// versions are written) and installed by scripts/setup with npm ci; Run
// refuses a framework whose installed packages are not the pinned ones.
// The scripts, npm/agents/<framework>.mjs, give the framework real tools
// and wire it to the server; the model's decisions are the server's. With
// a network namespace (realcli.Namespace) a run sees nothing but loopback,
// so a framework's own telemetry or update check fails at once instead of
// reaching out; the scripts turn those off besides.
package realotel

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/evosignal/evosignal/internal/workshop/fakemodel"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// Framework is one framework's script and what it uses.
type Framework struct {
	// Name is the script's name, npm/agents/<Name>.mjs, and the fixture's
	// folder, testdata/realotel/<Name>.
	Name string
	// Convention is the attribute convention its spans follow.
	Convention string
	// Protocol is the OTLP/HTTP encoding its exporter sends:
	// "http/protobuf" or "http/json".
	Protocol string
	// Packages are the npm packages it runs on, each pinned in
	// npm/package.json.
	Packages []string
	// Env is the environment the script needs beyond the harness's own.
	Env []string
}

// otel is the OpenTelemetry JS SDK every script sets up.
var otel = []string{"@opentelemetry/api", "@opentelemetry/sdk-trace-node", "@opentelemetry/sdk-trace-base", "@opentelemetry/resources"}

// Frameworks returns every framework, in the order of the fixtures'
// README.
func Frameworks() []Framework {
	return []Framework{
		{
			Name: "vercel-ai", Convention: "Vercel AI SDK ai.* (LegacyOpenTelemetry)", Protocol: "http/json",
			Packages: append([]string{"ai", "@ai-sdk/openai-compatible", "@ai-sdk/otel", "@opentelemetry/exporter-trace-otlp-http"}, otel...),
		},
		{
			Name: "vercel-ai-genai", Convention: "OpenTelemetry GenAI (AI SDK 7 OpenTelemetry)", Protocol: "http/json",
			Packages: append([]string{"ai", "@ai-sdk/openai-compatible", "@ai-sdk/otel", "@opentelemetry/exporter-trace-otlp-http"}, otel...),
		},
		{
			Name: "openinference", Convention: "OpenInference", Protocol: "http/protobuf",
			Packages: append([]string{"openai", "@arizeai/openinference-instrumentation-openai", "@arizeai/openinference-core", "@arizeai/openinference-semantic-conventions", "@opentelemetry/exporter-trace-otlp-proto"}, otel...),
		},
		{
			Name: "openllmetry", Convention: "OpenLLMetry (Traceloop)", Protocol: "http/protobuf",
			Packages: []string{"openai", "@traceloop/node-server-sdk", "@opentelemetry/api", "@opentelemetry/exporter-trace-otlp-proto"},
			// Traceloop's own switches: no anonymous telemetry, no prompt
			// registry polling, no API key; its exporter goes to the
			// harness's endpoint (TRACELOOP_BASE_URL, set by Run).
			Env: []string{"TRACELOOP_TELEMETRY=FALSE", "TRACELOOP_SYNC_ENABLED=false"},
		},
		{
			Name: "strands", Convention: "OpenTelemetry GenAI (Strands Agents)", Protocol: "http/json",
			Packages: append([]string{"@strands-agents/sdk", "@modelcontextprotocol/sdk", "openai", "@opentelemetry/exporter-trace-otlp-http"}, otel...),
			// The GenAI conventions as they stand (gen_ai.input.messages,
			// gen_ai.output.messages ...), not Strands' older default.
			Env: []string{"OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental"},
		},
	}
}

// Lookup returns the framework named name.
func Lookup(name string) (Framework, error) {
	var names []string
	for _, f := range Frameworks() {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Framework{}, fmt.Errorf("realotel: no framework %q (known: %s)", name, strings.Join(names, ", "))
}

// NPMDir is the folder of the pinned frameworks' package.json, next to
// this file.
func NPMDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("realotel: cannot tell where its source is")
	}
	return filepath.Join(filepath.Dir(file), "npm"), nil
}

// Pins returns the pinned version of each package, as npm/package.json
// writes it.
func Pins() (map[string]string, error) {
	dir, err := NPMDir()
	if err != nil {
		return nil, err
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return nil, fmt.Errorf("realotel: the pinned packages: %w", err)
	}
	return pkg.Dependencies, nil
}

// Installed returns the installed version of each of f's packages, after
// checking that it is the pinned one.
func (f Framework) Installed() (map[string]string, error) {
	pins, err := Pins()
	if err != nil {
		return nil, err
	}
	dir, err := NPMDir()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var errs []error
	for _, p := range f.Packages {
		want, ok := pins[p]
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not pinned in npm/package.json", p))
			continue
		}
		var pkg struct{ Version string }
		if err := readJSON(filepath.Join(dir, "node_modules", p, "package.json"), &pkg); err != nil {
			errs = append(errs, fmt.Errorf("%s is not installed (scripts/setup installs the pinned frameworks): %w", p, err))
			continue
		}
		if pkg.Version != want {
			errs = append(errs, fmt.Errorf("%s %s is installed, but %s is pinned: run scripts/setup", p, pkg.Version, want))
			continue
		}
		out[p] = pkg.Version
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("realotel: %s: %w", f.Name, err)
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// Options configures Run.
type Options struct {
	// NS is the network namespace the fake server listens in and the
	// script runs in; the OTLP endpoint must be reachable from there (an
	// otlpcapture.Serve on NS.Listen). Nil: the machine's own loopback.
	NS *realcli.Namespace
	// Dir is the run's directory (the script's home and work directory
	// below it); a temporary one, removed after, when empty.
	Dir string
	// Timeout bounds the script's run; 60 s when zero.
	Timeout time.Duration
	// Session is the session id the script gives the framework where it
	// takes one (REALOTEL_SESSION); "session-<framework>" when empty.
	Session string
}

// Result is one run: the truth, what the script printed, and the fake
// server's requests.
type Result struct {
	Truth          Truth
	Stdout, Stderr []byte
	Requests       []fakemodel.Request
}

// Model is the model name the scripts ask for.
const Model = "fake-gpt"

// Run runs framework's script on the task against a fake model server
// with Script, exporting to otlpEndpoint (an OTEL_EXPORTER_OTLP_ENDPOINT
// value, http://host:port), and returns the truth of the run: Script's
// counts as the server and the script's tools saw them, and the tokens the
// server reported. It fails when the framework is not the pinned one, the
// script fails, the server could not answer as asked (a request past the
// script's end: the framework asked for more than the script says), or the
// tools the script ran are not the script's calls.
func Run(ctx context.Context, framework, otlpEndpoint string, opts Options) (Result, error) {
	f, err := Lookup(framework)
	if err != nil {
		return Result{}, err
	}
	if _, err := f.Installed(); err != nil {
		return Result{}, err
	}
	npm, err := NPMDir()
	if err != nil {
		return Result{}, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "realotel-"+f.Name+"-"); err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(dir)
	}
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, filepath.Join(home, "tmp"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Result{}, err
		}
	}
	for name, content := range Workspace {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			return Result{}, err
		}
	}

	var l net.Listener
	if opts.NS != nil {
		l, err = opts.NS.Listen()
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return Result{}, fmt.Errorf("realotel: %w", err)
	}
	srv := fakemodel.Serve(l, fakemodel.Config{Script: Script(), Model: Model})
	defer srv.Close()

	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(npm, "agents", f.Name+".mjs"))
	cmd.Dir = work
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"LANG=C.UTF-8",
		"REALOTEL_MODEL_URL=" + srv.URL() + "/v1",
		"REALOTEL_MODEL=" + Model,
		"REALOTEL_WORKDIR=" + work,
		"REALOTEL_SESSION=" + cmp.Or(opts.Session, "session-"+f.Name),
		"OPENAI_API_KEY=fake-key",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlpEndpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + f.Protocol,
		"TRACELOOP_BASE_URL=" + otlpEndpoint,
		"OTEL_SERVICE_NAME=evosignal-realotel-" + f.Name,
		"DO_NOT_TRACK=1",
		"NO_UPDATE_NOTIFIER=1",
	}, f.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if opts.NS != nil {
		err = opts.NS.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return Result{}, fmt.Errorf("realotel: start node: %w", err)
	}
	err = cmd.Wait()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Requests: srv.Requests()}
	if err != nil {
		return res, fmt.Errorf("realotel: %s: %w\nstdout:\n%s\nstderr:\n%s", f.Name, err, stdout.Bytes(), stderr.Bytes())
	}
	if err := srv.Err(); err != nil {
		return res, fmt.Errorf("realotel: %s: the fake model server: %w", f.Name, err)
	}
	calls, answer, err := report(stdout.Bytes())
	if err != nil {
		return res, fmt.Errorf("realotel: %s: %w\nstderr:\n%s", f.Name, err, stderr.Bytes())
	}
	if want := scriptCalls(); !slices.Equal(calls, want) {
		return res, fmt.Errorf("realotel: %s ran the tools %v, the script's calls are %v", f.Name, calls, want)
	}
	if answer != Answer {
		return res, fmt.Errorf("realotel: %s answered %q, the script's answer is %q", f.Name, answer, Answer)
	}
	res.Truth = truthOf(calls, srv)
	return res, nil
}

// report reads the script's last line of stdout: the tools it ran and
// its answer (common.mjs, Tools.report).
func report(stdout []byte) ([]toolCall, string, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	var r struct {
		Calls  []toolCall `json:"calls"`
		Answer string     `json:"answer"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return nil, "", fmt.Errorf("the script's report (its last line of stdout): %w\nstdout:\n%s", err, stdout)
	}
	return r.Calls, r.Answer, nil
}

// truthOf is the truth of a run whose tools made calls against srv.
func truthOf(calls []toolCall, srv *fakemodel.Server) Truth {
	t := Truth{Sessions: 1, ModelCalls: srv.Answered()}
	for _, c := range calls {
		switch c.Name {
		case "update_task_plan":
			if t.Plans == 0 {
				t.Plans++
			} else {
				t.Replans++
			}
		case "complete_task":
			t.Completions++
		default:
			t.RealCalls++
			if !c.OK {
				t.FailedCalls++
			}
		}
	}
	u := srv.Usage()
	t.InputTokens, t.OutputTokens, t.CachedTokens = u.Input, u.Output, u.Cached
	return t
}
