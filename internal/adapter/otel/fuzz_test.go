package otel_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/oteltest"
)

// FuzzReadJSON: whatever an OTLP JSON file holds, the mapper emits only
// events that pass the contract (the sink checks), and fails only on lines
// it reports, or by refusing a file that is not OTLP.
func FuzzReadJSON(f *testing.F) {
	ss := adaptertest.Generate(2, 2, planTools, genStart, true)
	var all bytes.Buffer
	for _, td := range oteltest.Exports(3, ss) {
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		all.Write(append(b, '\n'))
	}
	f.Add(all.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := otelad.New(otelad.DefaultConfig(), &sink{tb: t})
		if err != nil {
			t.Fatal(err)
		}
		err = otelad.ReadJSON(context.Background(), bytes.NewReader(b), 0, m, func(*otelad.LineError) {})
		var notOTLP *otelad.NotOTLPError
		if err != nil && !errors.Is(err, bytes.ErrTooLarge) && !errors.As(err, &notOTLP) {
			t.Fatalf("ReadJSON: %v", err)
		}
	})
}
