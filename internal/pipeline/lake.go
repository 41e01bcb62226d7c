package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/evosignal/evosignal/internal/lake"
	"github.com/prometheus/client_golang/prometheus"
)

// LakeConfig makes the running pipeline seal its database into an Iceberg
// lake (docs/scale.md, "The lake"): every Every, on demand (Seal, POST
// /seal on the HTTP listener) and once more on Close, after the last batch
// is committed.
type LakeConfig struct {
	// Lake is the lake, opened by the caller (who closes it after the
	// pipeline).
	Lake *lake.Lake
	// Shard is the database's name in the lake. Replicas of one partition
	// (each its own consumer and database) seal under one name: whichever
	// seals first seals for both (lake.Seal).
	Shard string
	// Every is how often to seal; 0 seals only on demand and on Close.
	Every time.Duration
	// Keep is how long the lake keeps a table's older snapshots
	// (lake.Expire, at most hourly after a seal that committed); 0 keeps
	// them all.
	Keep time.Duration
}

// expireEvery is how often a sealer expires the lake's old snapshots.
const expireEvery = time.Hour

// SealResult is what one seal did.
type SealResult struct {
	Shard  string           `json:"shard"`
	Tables []lake.TableSeal `json:"tables"`
	Rows   int64            `json:"rows"`
	Took   time.Duration    `json:"-"`
	TookMS int64            `json:"took_ms"`
}

// sealer seals the pipeline's database into the lake, one seal at a time.
type sealer struct {
	cfg LakeConfig
	p   *Pipeline
	mu  sync.Mutex // one seal at a time

	stop chan struct{}
	done chan struct{}

	statsMu sync.Mutex
	seals   int64 // seals that committed something
	empty   int64 // seals with nothing new
	failed  int64 // seals that failed
	raced   int64 // seals another replica got ahead of (lake.ErrRaced)
	rows    int64
	last    time.Time // of the last seal that succeeded
	lastErr error

	expired time.Time // when the sealer last expired snapshots (under mu)
}

// startSealer stages the seals' files in the database's temp directory
// (the only place a locked-down database may write) and starts the
// interval.
func (p *Pipeline) startSealer(ctx context.Context) error {
	c := p.cfg.Lake
	var tmp string
	if err := p.st.DB().QueryRowContext(ctx, `SELECT current_setting('temp_directory')`).Scan(&tmp); err != nil {
		return fmt.Errorf("lake: the database's temp directory: %w", err)
	}
	if tmp == "" {
		return errors.New("lake: the database has no temp directory to stage the seals' files in")
	}
	if err := c.Lake.StageIn(filepath.Join(tmp, "lake-seal")); err != nil {
		return err
	}
	s := &sealer{cfg: *c, p: p, stop: make(chan struct{}), done: make(chan struct{})}
	p.sealer = s
	go s.loop()
	p.log.Info("sealing into the lake", "lake", c.Lake.Name(), "shard", c.Shard, "every", c.Every)
	return nil
}

func (s *sealer) loop() {
	defer close(s.done)
	if s.cfg.Every <= 0 {
		<-s.stop
		return
	}
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.seal(context.Background())
		}
	}
}

// seal seals once and logs and counts what it did. A failed seal is
// retried at the next interval: the lake's snapshot is as it was.
func (s *sealer) seal(ctx context.Context) (SealResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t0 := time.Now()
	tables, err := s.cfg.Lake.Seal(ctx, s.p.st.DB(), s.cfg.Shard)
	r := SealResult{Shard: s.cfg.Shard, Tables: tables, Took: time.Since(t0)}
	r.TookMS = r.Took.Milliseconds()
	for _, t := range tables {
		r.Rows += t.Rows
	}
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	switch {
	case errors.Is(err, lake.ErrRaced):
		s.raced++
		s.p.log.Info("another replica sealed the shard first; the next seal goes on from it", "shard", s.cfg.Shard, "err", err)
	case err != nil:
		s.failed++
		s.lastErr = err
		s.p.log.Warn("seal into the lake failed; the lake is as it was, the next seal tries again", "shard", s.cfg.Shard, "err", err)
	case len(tables) == 0:
		s.empty++
		s.last, s.lastErr = time.Now(), nil
	default:
		s.seals++
		s.rows += r.Rows
		s.last, s.lastErr = time.Now(), nil
		s.p.log.Info("sealed into the lake", "shard", s.cfg.Shard, "tables", len(tables), "rows", r.Rows, "took", r.Took.Round(time.Millisecond))
	}
	if err == nil && len(tables) > 0 && s.cfg.Keep > 0 && time.Since(s.expired) >= expireEvery {
		s.expired = time.Now()
		// Unlocked: Expire takes the lake's commit lock, and the stats
		// wait for nothing but it.
		s.statsMu.Unlock()
		n, err := s.cfg.Lake.Expire(ctx, s.cfg.Keep)
		s.statsMu.Lock()
		if err != nil {
			s.p.log.Warn("expiring the lake's old snapshots failed; tried again in an hour", "err", err)
		} else if n > 0 {
			s.p.log.Info("expired the lake's old snapshots", "snapshots", n, "older than", s.cfg.Keep)
		}
	}
	return r, err
}

// close stops the interval and seals what the last batches committed.
func (s *sealer) close() error {
	close(s.stop)
	<-s.done
	if _, err := s.seal(context.Background()); err != nil {
		return fmt.Errorf("the last seal, on stop: %w", err)
	}
	return nil
}

// Seal seals the database into the lake now and returns what it committed
// (nothing when the lake has everything already). It fails when the
// pipeline has no lake.
func (p *Pipeline) Seal(ctx context.Context) (SealResult, error) {
	if p.sealer == nil {
		return SealResult{}, errors.New("no lake: the pipeline was started without one")
	}
	return p.sealer.seal(ctx)
}

// handleSeal is POST /seal: a seal now, answered with what it committed.
func (s *sealer) handleSeal(w http.ResponseWriter, r *http.Request) {
	res, err := s.seal(r.Context())
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(res)
}

// collectors are the sealer's metrics.
func (s *sealer) collectors() []prometheus.Collector {
	read := func(f func() float64) func() float64 {
		return func() float64 {
			s.statsMu.Lock()
			defer s.statsMu.Unlock()
			return f()
		}
	}
	l := prometheus.Labels{"shard": s.cfg.Shard}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_lake_seals_total", Help: "Seals into the lake that committed something.", ConstLabels: l},
			read(func() float64 { return float64(s.seals) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_lake_seals_empty_total", Help: "Seals into the lake that found nothing new.", ConstLabels: l},
			read(func() float64 { return float64(s.empty) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_lake_seal_failures_total", Help: "Seals into the lake that failed (the lake is then as it was).", ConstLabels: l},
			read(func() float64 { return float64(s.failed) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_lake_seal_races_total", Help: "Seals into the lake that stopped because another replica of the shard sealed it meanwhile (not failures: the next seal goes on from it).", ConstLabels: l},
			read(func() float64 { return float64(s.raced) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "evosignal_lake_sealed_rows_total", Help: "Rows sealed into the lake, all tables.", ConstLabels: l},
			read(func() float64 { return float64(s.rows) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "evosignal_lake_last_seal_timestamp_seconds", Help: "Unix time of the last seal that succeeded.", ConstLabels: l},
			read(func() float64 {
				if s.last.IsZero() {
					return 0
				}
				return float64(s.last.UnixNano()) / 1e9
			})),
	}
}
