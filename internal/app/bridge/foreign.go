package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/adapter/cursor"
	otelad "github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/output"
	"github.com/evosignal/evosignal/internal/plandialect"
)

// The -agent values that pick another adapter than SkillLite's.
const (
	agentOTel       = "otel"
	agentClaudeCode = "claude-code"
	agentCursor     = "cursor"
)

// finish delivers what was translated, after an interrupt too, within a
// bound (output.CloseTimeout).
func finish(ctx context.Context, out *output.Output) error {
	return out.Close(ctx)
}

func bridgeOTel(ctx context.Context, in io.Reader, out *output.Output, stderr io.Writer, log *slog.Logger) error {
	m, err := otelad.New(otelad.DefaultConfig(), out)
	if err != nil {
		return errors.Join(err, finish(ctx, out))
	}
	readErr := otelad.ReadJSONLines(ctx, in, m, func(e *otelad.LineError) {
		log.Warn("malformed line skipped", "line", e.Line, "err", e.Err)
	})
	outErr := finish(ctx, out)
	s := m.Stats()
	fmt.Fprintf(stderr, "bridge: %d spans read, %d events emitted, %d sessions, %d spans rejected\n", s.Spans, s.Events, s.Sessions, s.Rejected)
	for _, n := range s.Notes() {
		fmt.Fprintf(stderr, "bridge: data quality: %s\n", n)
	}
	return errors.Join(readErr, outErr)
}

func bridgeClaudeCode(ctx context.Context, o *options, in io.Reader, out *output.Output, stderr io.Writer, log *slog.Logger) error {
	cfg := claudecode.Config{Agent: o.cfg.Agent, Source: o.cfg.Source, Model: o.cfg.Model, Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}
	tr, err := claudecode.NewTranslator(cfg, out, time.Now)
	if err != nil {
		return errors.Join(err, finish(ctx, out))
	}
	readErr := tr.Read(ctx, in, func(e *claudecode.RecordError) {
		log.Warn("malformed hook record skipped", "record", e.Record, "err", e.Err)
	})
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	closeErr := tr.Close(final)
	outErr := finish(ctx, out)
	c := tr.Stats()
	fmt.Fprintf(stderr, "bridge: %d hook records read, %d events emitted, %d sessions (%d ended, %d open), %d ignored, %d malformed\n",
		c.Records, c.Events, c.Sessions, c.Ended, c.Open, c.Ignored, c.Malformed)
	for _, n := range c.Quality.Notes() {
		fmt.Fprintf(stderr, "bridge: data quality: %s\n", n)
	}
	return errors.Join(readErr, closeErr, outErr)
}

func bridgeCursor(ctx context.Context, o *options, in io.Reader, out *output.Output, stderr io.Writer, log *slog.Logger) error {
	cfg := cursor.Config{Agent: o.cfg.Agent, Source: o.cfg.Source, Model: o.cfg.Model, Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}
	tr, err := cursor.NewTranslator(cfg, out, time.Now)
	if err != nil {
		return errors.Join(err, finish(ctx, out))
	}
	readErr := tr.Read(ctx, in, func(e *cursor.RecordError) {
		log.Warn("malformed hook record skipped", "record", e.Record, "err", e.Err)
	})
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	closeErr := tr.Close(final)
	outErr := finish(ctx, out)
	c := tr.Stats()
	fmt.Fprintf(stderr, "bridge: %d hook records read, %d events emitted, %d conversations (%d ended, %d open), %d ignored, %d malformed\n",
		c.Records, c.Events, c.Sessions, c.Ended, c.Open, c.Ignored, c.Malformed)
	for _, n := range c.Quality.Notes() {
		fmt.Fprintf(stderr, "bridge: data quality: %s\n", n)
	}
	return errors.Join(readErr, closeErr, outErr)
}
