package realotel_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/evosignal/evosignal/internal/workshop/otlpcapture"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
	"github.com/evosignal/evosignal/internal/workshop/realotel"
)

var update = flag.Bool("update", false, "rewrite testdata/realotel/<framework>/traces.jsonl")

// fixtures is testdata/realotel, from this package's folder.
const fixtures = "../../../testdata/realotel"

// TestFrameworks runs every framework on the task, in a loopback-only
// namespace, against otlpcapture: the server answered the whole script,
// the tools ran as scripted, the truth is the hand count, and what was
// exported is spans with trace ids. With -update it rewrites the fixtures.
func TestFrameworks(t *testing.T) {
	for _, f := range realotel.Frameworks() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			ns, err := realcli.NewNamespace()
			if err != nil {
				t.Fatal(err)
			}
			defer ns.Close()
			l, err := ns.Listen()
			if err != nil {
				t.Fatal(err)
			}
			capture := otlpcapture.Serve(l)
			defer capture.Close()

			res, err := realotel.Run(context.Background(), f.Name, capture.URL(), realotel.Options{NS: ns, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if err := capture.Err(); err != nil {
				t.Fatalf("the capture: %v", err)
			}
			if want := realotel.ScriptTruth(); res.Truth != want {
				t.Errorf("truth %+v, want the hand count %+v", res.Truth, want)
			}
			var want string
			switch f.Protocol {
			case "http/protobuf":
				want = "application/x-protobuf"
			case "http/json":
				want = "application/json"
			}
			var spans, untraced int
			for _, r := range capture.Requests() {
				if r.Signal != otlpcapture.Traces {
					continue
				}
				if r.ContentType != want {
					t.Errorf("an export in %s, want %s (%s)", r.ContentType, want, f.Protocol)
				}
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalJSON(r.JSON); err != nil {
					t.Fatal(err)
				}
				rss := req.Traces().ResourceSpans()
				for i := range rss.Len() {
					sss := rss.At(i).ScopeSpans()
					for j := range sss.Len() {
						ss := sss.At(j).Spans()
						for k := range ss.Len() {
							spans++
							if ss.At(k).TraceID().IsEmpty() {
								untraced++
							}
						}
					}
				}
			}
			if spans == 0 {
				t.Fatal("no span exported")
			}
			if untraced > 0 {
				t.Errorf("%d of %d spans have no trace id", untraced, spans)
			}
			t.Logf("%d spans in %d exports", spans, len(capture.Requests()))
			if !*update {
				return
			}
			var b bytes.Buffer
			if err := capture.JSONLines(&b, otlpcapture.Traces); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(fixtures, f.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "traces.jsonl"), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
