package sqlservice

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/evosignal/evosignal/queries"
)

// Service identity in NATS service discovery ($SRV.PING, $SRV.INFO,
// $SRV.STATS).
const (
	ServiceName = "evosignal-query"
	// Version is the service's version; its major number is the protocol's.
	Version = "1.0.0"
	// EndpointName is the name of the query endpoint.
	EndpointName = "sql"
	// DefaultSubject is the subject the service answers on by default. It is
	// outside the event stream's subjects (evo.>).
	DefaultSubject = "evosignal.query"
)

// Config configures the service.
type Config struct {
	// Subject the service answers on. One database, one subject: services
	// on the same subject form a queue group and any one of them answers.
	Subject string
	// Timeout is the longest a query may run, and the limit of a request
	// that sets none. A query past it is cancelled.
	Timeout time.Duration
	// MaxRows is the most rows an answer holds, and the limit of a request
	// that sets none; the rest is cut off and the answer says so.
	MaxRows int64
	// MaxConcurrent queries run at once; up to MaxQueued more wait for a
	// slot (their time limit running), and further ones are refused as busy.
	MaxConcurrent int
	MaxQueued     int
	// ChunkBytes is the most bytes of Arrow data per message; 0 or more than
	// the server allows means the server's max payload less HeaderRoom.
	ChunkBytes int
	// Window is how many Arrow messages the service sends ahead of the
	// client's acks.
	Window int
	// BatchRows and BatchBytes bound an Arrow record batch.
	BatchRows  int
	BatchBytes int
	// InboxPrefix is the subject prefix of the reply subjects the service
	// answers on (the clients' inboxes, nats.go's default "_INBOX"). A
	// request whose reply subject is not below it is dropped unanswered, so
	// an answer never lands on another subject such as the event stream's.
	InboxPrefix string
	// MaxRSS is the process's resident memory (bytes) past which every
	// running query is stopped with an error (503); 0 watches nothing.
	MaxRSS int64
}

// HeaderRoom is what the service leaves for headers in a message of the
// server's max payload.
const HeaderRoom = 4096

// DefaultConfig is the configuration `ingest` starts with.
func DefaultConfig() Config {
	return Config{
		Subject:       DefaultSubject,
		Timeout:       30 * time.Second,
		MaxRows:       1_000_000,
		MaxConcurrent: 4,
		MaxQueued:     64,
		Window:        16,
		BatchRows:     16 * 1024,
		BatchBytes:    4 << 20,
		InboxPrefix:   DefaultInboxPrefix,
		MaxRSS:        DefaultMaxRSS,
	}
}

// DefaultInboxPrefix is nats.go's inbox prefix.
const DefaultInboxPrefix = "_INBOX"

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Subject == "" {
		errs = append(errs, errors.New("query service: empty subject"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("query service: timeout %s is not positive", c.Timeout))
	}
	if c.MaxRows <= 0 {
		errs = append(errs, fmt.Errorf("query service: max rows %d is not positive", c.MaxRows))
	}
	if c.MaxConcurrent <= 0 || c.MaxQueued < 0 {
		errs = append(errs, fmt.Errorf("query service: concurrency %d (queue %d): want at least one slot and no negative queue", c.MaxConcurrent, c.MaxQueued))
	}
	if c.InboxPrefix == "" || strings.ContainsAny(c.InboxPrefix, "*> \t\r\n") || strings.HasPrefix(c.InboxPrefix, ".") || strings.HasSuffix(c.InboxPrefix, ".") || strings.Contains(c.InboxPrefix, "..") {
		errs = append(errs, fmt.Errorf("query service: inbox prefix %q is not a literal subject", c.InboxPrefix))
	}
	if c.MaxRSS < 0 {
		errs = append(errs, fmt.Errorf("query service: max RSS %d is negative", c.MaxRSS))
	}
	if c.ChunkBytes < 0 || c.Window <= 0 || c.BatchRows <= 0 || c.BatchBytes <= 0 {
		errs = append(errs, errors.New("query service: chunk bytes must not be negative; window, batch rows and batch bytes must be positive"))
	}
	return errors.Join(errs...)
}

// Service answers read-only SQL over NATS from one database. Start it with
// Start; Close stops it.
type Service struct {
	cfg      Config
	database string // the database's identity, in metadata and every answer
	last     micro.RespondOpt
	nc       *nats.Conn
	db       *sql.DB
	log      *slog.Logger
	svc      micro.Service
	slots    chan struct{}

	base   context.Context // cancelled by Close
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	closed   bool
	inflight int
	wg       sync.WaitGroup

	stats counters
	dog   *watchdog
}

// counters are the service's own statistics, in the data of its endpoint
// stats.
type counters struct {
	Answered, Failed, Refused, TimedOut, Busy, Truncated atomic.Int64
	Rows, Bytes, Running                                 atomic.Int64
}

// Start locks the database down (Lockdown) and answers queries on
// cfg.Subject until Close. The logger receives one debug line per query and
// warnings for answers that could not be sent.
func Start(ctx context.Context, nc *nats.Conn, db *sql.DB, cfg Config, log *slog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := Lockdown(ctx, db); err != nil {
		return nil, err
	}
	var database string
	if err := db.QueryRowContext(ctx, queries.MustRead("ingest/load_identity.sql")).Scan(&database); err != nil {
		return nil, fmt.Errorf("start query service: read the database identity: %w", err)
	}
	s := &Service{cfg: cfg, database: database, nc: nc, db: db, log: log, slots: make(chan struct{}, cfg.MaxConcurrent)}
	// An answer of one message (an error given at once).
	s.last = micro.WithHeaders(micro.Headers{HeaderSeq: {"0"}, HeaderEOS: {"true"}, HeaderDatabase: {database}})
	s.base, s.cancel = context.WithCancelCause(context.Background())
	if cfg.MaxRSS > 0 {
		s.dog = newWatchdog(cfg.MaxRSS)
		go s.dog.run(s.base, log)
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name:        ServiceName,
		Version:     Version,
		Description: "read-only SQL over the evosignal DuckDB database (docs/query-service.md)",
		Metadata: map[string]string{
			"protocol": "1",
			"database": database,
			"max_rows": strconv.FormatInt(cfg.MaxRows, 10),
			"timeout":  cfg.Timeout.String(),
		},
		StatsHandler: func(*micro.Endpoint) any { return s.statsData() },
	})
	if err != nil {
		s.cancel(nil)
		return nil, fmt.Errorf("start query service: %w", err)
	}
	if err := svc.AddEndpoint(EndpointName, micro.HandlerFunc(s.handle), micro.WithEndpointSubject(cfg.Subject),
		micro.WithEndpointMetadata(map[string]string{"formats": FormatArrow + "," + FormatJSON})); err != nil {
		svc.Stop()
		s.cancel(nil)
		return nil, fmt.Errorf("start query service on %s: %w", cfg.Subject, err)
	}
	s.svc = svc
	// Once Start returns, the server knows the subscription: a client on
	// another connection finds the service.
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		s.Close()
		return nil, fmt.Errorf("start query service on %s: %w", cfg.Subject, err)
	}
	return s, nil
}

// Database is the identity of the database the service answers from.
func (s *Service) Database() string { return s.database }

// Subject is the subject the service answers on.
func (s *Service) Subject() string { return s.cfg.Subject }

// Close stops taking queries, cancels those running (their clients get an
// error) and waits until every answer has ended. It is safe to call more
// than once.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.svc.Stop()
	s.cancel(errors.New("the query service is stopping"))
	s.wg.Wait()
	return err
}

func (s *Service) statsData() map[string]int64 {
	return map[string]int64{
		"answered": s.stats.Answered.Load(), "failed": s.stats.Failed.Load(),
		"refused": s.stats.Refused.Load(), "timed_out": s.stats.TimedOut.Load(),
		"busy": s.stats.Busy.Load(), "truncated": s.stats.Truncated.Load(),
		"rows": s.stats.Rows.Load(), "bytes": s.stats.Bytes.Load(), "running": s.stats.Running.Load(),
		"memory_stopped": s.dog.Stopped(),
	}
}

// handle takes one request: it answers bad and excess requests at once and
// hands the others to a goroutine of their own (the micro framework calls
// handlers one at a time).
func (s *Service) handle(req micro.Request) {
	start := time.Now()
	if reply := req.Reply(); reply != "" && !strings.HasPrefix(reply, s.cfg.InboxPrefix+".") {
		s.stats.Refused.Add(1)
		s.log.Warn("query request dropped: its reply subject is not an inbox", "reply", reply, "inbox_prefix", s.cfg.InboxPrefix)
		return
	}
	r, err := parseRequest(req.Data())
	var q Query
	if err == nil {
		q, err = r.decode()
	}
	if err != nil {
		e := asError(err)
		s.stats.Failed.Add(1)
		req.Error(strconv.Itoa(e.Code), e.Error(), nil, s.last)
		return
	}
	if req.Reply() == "" {
		s.stats.Failed.Add(1)
		return // nobody to answer
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		req.Error("503", "the query service is stopping", nil, s.last)
		return
	case s.inflight >= s.cfg.MaxConcurrent+s.cfg.MaxQueued:
		n := s.inflight
		s.mu.Unlock()
		s.stats.Busy.Add(1)
		req.Error("503", fmt.Sprintf("the query service is busy: %d queries running or waiting", n), nil, s.last)
		return
	}
	s.inflight++
	s.wg.Add(1)
	s.mu.Unlock()

	q.MaxRows = limit(r.MaxRows, s.cfg.MaxRows)
	timeout := limitDuration(time.Duration(r.TimeoutMS)*time.Millisecond, s.cfg.Timeout)
	ctx, cancel := context.WithTimeout(s.base, timeout)
	reply := req.Reply()
	go func() {
		defer s.wg.Done()
		defer cancel()
		defer func() {
			s.mu.Lock()
			s.inflight--
			s.mu.Unlock()
		}()
		s.serve(ctx, reply, q, r.Format, timeout, start)
	}()
}

// serve runs one query and sends its answer.
func (s *Service) serve(ctx context.Context, reply string, q Query, format string, timeout time.Duration, start time.Time) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		s.answerError(reply, s.timeoutError(ctx, timeout, "while waiting for a free slot"), q, start)
		return
	}
	s.stats.Running.Add(1)
	defer s.stats.Running.Add(-1)
	ctx, unwatch := s.dog.watch(ctx) // running, not waiting: the watchdog's to stop
	defer unwatch()
	if format == FormatJSON {
		s.serveJSON(ctx, reply, q, timeout, start)
		return
	}
	st, err := openStream(ctx, s.nc, reply, s.database, s.chunkBytes(), s.cfg.Window)
	if err != nil {
		s.answerError(reply, asError(err), q, start)
		return
	}
	defer st.close()
	sk := &arrowSink{out: st, batchRows: s.cfg.BatchRows, batchSize: s.cfg.BatchBytes}
	out, err := run(ctx, s.db, q, sk)
	if err == nil {
		err = sk.close()
	} else if sk.rb != nil {
		sk.rb.Release()
	}
	if err == nil {
		err = st.finish(out)
	}
	s.stats.Bytes.Add(st.bytes)
	if err != nil {
		e := s.classify(ctx, asError(err), timeout)
		if ferr := st.fail(e); ferr != nil {
			s.log.Warn("query answer not sent", "subject", reply, "err", ferr)
		}
		s.record(e, q, start, out)
		return
	}
	s.record(nil, q, start, out)
}

func (s *Service) serveJSON(ctx context.Context, reply string, q Query, timeout time.Duration, start time.Time) {
	sk := jsonSink{limit: s.nc.MaxPayload() - HeaderRoom}
	out, err := run(ctx, s.db, q, &sk)
	var body []byte
	if err == nil {
		body, err = sk.encode(out.truncated)
	}
	if err == nil && int64(len(body)) > s.nc.MaxPayload()-HeaderRoom {
		err = newError(413, fmt.Sprintf("the JSON answer (%d bytes, %d rows) is larger than a NATS message (max payload %d): ask for format %q, or fewer rows with max_rows",
			len(body), out.rows, s.nc.MaxPayload(), FormatArrow))
	}
	if err != nil {
		s.answerError(reply, s.classify(ctx, asError(err), timeout), q, start)
		return
	}
	h := nats.Header{}
	h.Set(HeaderSeq, "0")
	h.Set(HeaderEOS, "true")
	h.Set(HeaderDatabase, s.database)
	h.Set(HeaderRows, strconv.FormatInt(out.rows, 10))
	h.Set(HeaderTruncated, strconv.FormatBool(out.truncated))
	h.Set("Content-Type", "application/json")
	if err := s.nc.PublishMsg(&nats.Msg{Subject: reply, Data: body, Header: h}); err != nil {
		s.log.Warn("query answer not sent", "subject", reply, "err", err)
	}
	s.stats.Bytes.Add(int64(len(body)))
	s.record(nil, q, start, out)
}

// answerError sends an error as the whole answer.
func (s *Service) answerError(reply string, e *Error, q Query, start time.Time) {
	h := nats.Header{}
	h.Set(HeaderSeq, "0")
	h.Set(HeaderEOS, "true")
	h.Set(HeaderDatabase, s.database)
	h.Set(HeaderError, e.Error())
	h.Set(HeaderErrorCode, strconv.Itoa(e.Code))
	if err := s.nc.PublishMsg(&nats.Msg{Subject: reply, Header: h}); err != nil {
		s.log.Warn("query answer not sent", "subject", reply, "err", err)
	}
	s.record(e, q, start, outcome{})
}

// classify makes a time-out say which limit it hit.
func (s *Service) classify(ctx context.Context, e *Error, timeout time.Duration) *Error {
	if cause := context.Cause(ctx); errors.Is(cause, errMemory) {
		return newError(503, "the query was stopped: "+cause.Error())
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return s.timeoutError(ctx, timeout, "")
	}
	return e
}

func (s *Service) timeoutError(ctx context.Context, timeout time.Duration, where string) *Error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newError(503, "the query was cancelled: "+context.Cause(ctx).Error())
	}
	msg := fmt.Sprintf("the query ran past its time limit of %s and was cancelled", timeout)
	if where != "" {
		msg = fmt.Sprintf("the query reached its time limit of %s %s", timeout, where)
	}
	return newError(408, msg)
}

func (s *Service) record(e *Error, q Query, start time.Time, out outcome) {
	s.stats.Rows.Add(out.rows)
	if out.truncated {
		s.stats.Truncated.Add(1)
	}
	switch {
	case e == nil:
		s.stats.Answered.Add(1)
	case e.Code == 403:
		s.stats.Refused.Add(1)
	case e.Code == 408:
		s.stats.TimedOut.Add(1)
	default:
		s.stats.Failed.Add(1)
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		attrs := []any{"rows", out.rows, "truncated", out.truncated, "took", time.Since(start).Round(time.Microsecond)}
		if e != nil {
			attrs = append(attrs, "code", e.Code, "err", e.Error())
		}
		s.log.Debug("query", append(attrs, "sql", abbreviate(q.SQL, 200))...)
	}
}

func (s *Service) chunkBytes() int {
	most := int(s.nc.MaxPayload()) - HeaderRoom
	if s.cfg.ChunkBytes > 0 && s.cfg.ChunkBytes < most {
		return s.cfg.ChunkBytes
	}
	return most
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Stats is the service's own statistics as $SRV.STATS reports them in the
// data of its endpoint.
func (s *Service) Stats() map[string]int64 { return s.statsData() }
