package realcli

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/workshop/otlpcapture"
)

// The OTLP/HTTP encodings a CLI can be told to export in.
const (
	OTLPJSON     = "http/json"
	OTLPProtobuf = "http/protobuf"
)

// Telemetry is a CLI's own OpenTelemetry export, pointed at an OTLP/HTTP
// receiver in the harness's namespace (Harness.Telemetry starts an
// otlpcapture sink; Harness.TelemetryListener opens a listener for
// another receiver, internal/otlpin's). Set on a ClaudeCode or a Codex
// before its first prompt, it turns the CLI's export of traces, logs and
// metrics on; nil, the default, leaves the CLI's configuration as it is
// without. Claude Code exports with
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC set (it switches off
// Anthropic's own telemetry, not OTel); Codex, with [otel] on, also POSTs
// {base_url}/analytics/codex/turn-costs to its model provider at each
// turn's end (the fake server answers 404).
type Telemetry struct {
	// Endpoint is the receiver's base URL, http://127.0.0.1:PORT: the
	// CLI posts to Endpoint/v1/traces, /v1/logs and /v1/metrics.
	Endpoint string
	// Protocol is OTLPJSON (the default when empty) or OTLPProtobuf.
	Protocol string
}

// protocol is t's protocol, OTLPJSON when unset.
func (t *Telemetry) protocol() string {
	if t.Protocol == "" {
		return OTLPJSON
	}
	return t.Protocol
}

// Telemetry starts an OTLP/HTTP sink in the harness's namespace, closed
// with the test, and returns it with the Telemetry that points a CLI at
// it.
func (h *Harness) Telemetry(tb testing.TB) (*otlpcapture.Server, *Telemetry) {
	tb.Helper()
	l, tel := h.TelemetryListener(tb)
	srv := otlpcapture.Serve(l)
	tb.Cleanup(func() { srv.Close() })
	return srv, tel
}

// TelemetryListener opens a listener in the harness's namespace for
// another OTLP/HTTP receiver to serve (internal/otlpin's Config.Listener,
// which then closes it), and returns it with the Telemetry that points a
// CLI at it.
func (h *Harness) TelemetryListener(tb testing.TB) (net.Listener, *Telemetry) {
	tb.Helper()
	l, err := h.NS.Listen()
	if err != nil {
		tb.Fatalf("realcli: %v", err)
	}
	return l, &Telemetry{Endpoint: "http://" + l.Addr().String()}
}

// claudeCodeEnv is Claude Code's environment for t: OTel on
// (CLAUDE_CODE_ENABLE_TELEMETRY), every signal to the receiver in t's
// encoding, traces on (they are behind CLAUDE_CODE_ENHANCED_TELEMETRY_BETA
// in 2.1.x), the prompts and the tools' inputs in the log events, and
// exports every 200 ms rather than every 5 s (logs, spans) or 60 s
// (metrics), so that a short headless run has exported before it exits.
func (t *Telemetry) claudeCodeEnv() []string {
	return []string{
		"CLAUDE_CODE_ENABLE_TELEMETRY=1",
		"CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_LOGS_EXPORTER=otlp",
		"OTEL_METRICS_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=" + t.protocol(),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + t.Endpoint,
		"OTEL_LOG_USER_PROMPTS=1",
		"OTEL_LOG_TOOL_DETAILS=1",
		"OTEL_LOGS_EXPORT_INTERVAL=200",
		"OTEL_BSP_SCHEDULE_DELAY=200",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_EXPORT_INTERVAL=200",
	}
}

// codexConfig is the [otel] table of Codex's config.toml for t: logs
// (exporter), spans (trace_exporter) and metrics (metrics_exporter) to
// the receiver in t's encoding ("json" or "binary"),
// the prompts in the log events, and environment "evosignal-realcli"
// (a resource attribute of every export).
func (t *Telemetry) codexConfig() string {
	proto := "json"
	if t.protocol() == OTLPProtobuf {
		proto = "binary"
	}
	endpoint := strings.TrimSuffix(t.Endpoint, "/")
	return fmt.Sprintf(`
[otel]
environment = "evosignal-realcli"
log_user_prompt = true
exporter = { otlp-http = { endpoint = %q, protocol = %q } }
trace_exporter = { otlp-http = { endpoint = %q, protocol = %q } }
metrics_exporter = { otlp-http = { endpoint = %q, protocol = %q } }
`, endpoint+"/v1/logs", proto, endpoint+"/v1/traces", proto, endpoint+"/v1/metrics", proto)
}
