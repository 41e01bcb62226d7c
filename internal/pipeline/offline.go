package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/evosignal/evosignal/internal/ingest"
	"github.com/evosignal/evosignal/internal/store"
)

// The store's offline modes: no NATS, the store opened as the running
// pipeline opens it (Config.DB, Config.Store), one job, closed again.

// Rebuild derives the typed tables and the stored facts of cfg.DB again
// from its event log. Each step is logged to cfg.Log (unless
// cfg.Store.Progress is set).
func Rebuild(ctx context.Context, cfg Config) error {
	if cfg.Store.Progress == nil {
		cfg.Store.Progress = logProgress(cfg.Log)
	}
	st, err := store.OpenWith(ctx, cfg.DB, cfg.Store)
	if err != nil {
		return err
	}
	return errors.Join(st.Rebuild(ctx), st.Close())
}

// LoadFile ingests the JSON lines of r (named name in dead letters) into
// cfg.DB with the ingester's configuration. each, if not nil, is called
// with every dead letter once its batch is committed.
func LoadFile(ctx context.Context, cfg Config, r io.Reader, name string, each func(store.Item)) (store.Result, error) {
	st, err := store.OpenWith(ctx, cfg.DB, cfg.Store)
	if err != nil {
		return store.Result{}, err
	}
	in, err := ingest.New(cfg.ingestConfig(), st, cfg.Log)
	if err != nil {
		return store.Result{}, errors.Join(err, st.Close())
	}
	in.OnDeadLetter(each)
	res, err := in.LoadFile(ctx, r, name)
	return res, errors.Join(err, st.Close())
}

// ReplayDeadLetters runs the dead letters of cfg.DB that no replay resolved
// again through the ingester's validation and the store, calling each with
// its outcome (ingest.Ingester.ReplayDeadLetters). With dryRun nothing is
// written.
func ReplayDeadLetters(ctx context.Context, cfg Config, dryRun bool, each func(ingest.Replayed)) (ingest.ReplayResult, error) {
	st, err := store.OpenWith(ctx, cfg.DB, cfg.Store)
	if err != nil {
		return ingest.ReplayResult{}, err
	}
	in, err := ingest.New(cfg.ingestConfig(), st, cfg.Log)
	if err != nil {
		return ingest.ReplayResult{}, errors.Join(err, st.Close())
	}
	res, err := in.ReplayDeadLetters(ctx, dryRun, each)
	return res, errors.Join(err, st.Close())
}

// logProgress logs each step of a long store operation (a rebuild, a facts
// refresh stored in passes) at info level; nil for no logger.
func logProgress(log *slog.Logger) func(store.Progress) {
	if log == nil {
		return nil
	}
	return func(p store.Progress) {
		attrs := []any{"step", p.Step, "done", p.Done, "of", p.Of,
			"took", p.Took.Round(time.Millisecond), "elapsed", p.Elapsed.Round(time.Millisecond)}
		if p.Rows >= 0 {
			attrs = append(attrs, "rows", p.Rows)
		}
		if p.ETA > 0 {
			attrs = append(attrs, "eta", p.ETA.Round(time.Second))
		}
		log.Info(p.Op+" progress", attrs...)
	}
}
