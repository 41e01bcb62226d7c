package sqlservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/nats-io/nats.go"
)

// Client asks a query service over NATS.
type Client struct {
	nc      *nats.Conn
	subject string
	// Wait is the longest the client waits for any one message of an
	// answer (the first one comes when the query has run). Default 10 min.
	Wait time.Duration
	// Grace is how long past a request's own time limit (TimeoutMS) the
	// client waits for the whole answer: the service reports a query that
	// ran out of time itself, and Grace leaves room for that report. Past
	// it, the client gives up with ErrTimeout, also when the service died
	// mid-answer. Default 5 s.
	Grace time.Duration

	mu       sync.Mutex
	database string // the identity of the database the first answer came from
}

// Database is the identity of the database the client's answers come from
// (the Evo-Database header), empty before the first answer.
func (c *Client) Database() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.database
}

// heard notes the database an answer came from, and says so when it is not
// the one the earlier answers came from.
func (c *Client) heard(db string) error {
	if db == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.database {
	case "":
		c.database = db
	case db:
	default:
		return newError(409, fmt.Sprintf("answers on %s come from two databases, %s and then %s: two ingesters with different databases "+
			"answer on one subject; give each its own -query-subject (and -consumer)", c.subject, c.database, db))
	}
	return nil
}

// NewClient returns a client of the service answering on subject
// (DefaultSubject when empty).
func NewClient(nc *nats.Conn, subject string) *Client {
	if subject == "" {
		subject = DefaultSubject
	}
	return &Client{nc: nc, subject: subject, Wait: 10 * time.Minute, Grace: 5 * time.Second}
}

// Stats describes how an answer travelled.
type Stats struct {
	Messages int   // NATS messages of the answer
	Bytes    int64 // their payload bytes
}

// Query runs req through the service as an Arrow stream and returns its
// rows as the DuckDB driver's Go values.
func (c *Client) Query(ctx context.Context, req Request) (*Result, error) {
	res, _, err := c.QueryStats(ctx, req)
	return res, err
}

// QueryStats is Query that also reports how the answer travelled.
func (c *Client) QueryStats(ctx context.Context, req Request) (*Result, Stats, error) {
	req.Format = FormatArrow
	r, err := c.open(ctx, req)
	if err != nil {
		return nil, Stats{}, err
	}
	defer r.close()
	res, err := r.decode()
	return res, Stats{Messages: r.next, Bytes: r.bytes}, err
}

func (c *Client) open(ctx context.Context, req Request) (*answerReader, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode query request: %w", err)
	}
	// The request's time limit bounds the whole answer, not each message:
	// a service that dies mid-answer sends neither the rest nor an error.
	cancel := context.CancelFunc(func() {})
	if req.TimeoutMS > 0 {
		limit := time.Duration(req.TimeoutMS) * time.Millisecond
		ctx, cancel = context.WithTimeoutCause(ctx, limit+c.Grace, newError(408, fmt.Sprintf(
			"no complete answer from the query service on %s within the time limit of %s and %s grace (did the service stop mid-answer?)",
			c.subject, limit, c.Grace)))
	}
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("subscribe for the answer: %w", err)
	}
	if err := c.nc.PublishRequest(c.subject, inbox, body); err != nil {
		sub.Unsubscribe()
		cancel()
		return nil, fmt.Errorf("send query request to %s: %w", c.subject, err)
	}
	return &answerReader{ctx: ctx, cancel: cancel, c: c, sub: sub}, nil
}

// answerReader reads the messages of one answer as one byte stream,
// checking their order and acking them.
type answerReader struct {
	ctx       context.Context
	cancel    context.CancelFunc // releases ctx's deadline, if any
	c         *Client
	sub       *nats.Subscription
	cur       []byte
	next      int // seq of the next message
	bytes     int64
	flow      string
	eos       bool
	rows      int64
	truncated bool
	err       error // the first error, sticky
}

func (r *answerReader) close() {
	r.sub.Unsubscribe()
	r.cancel()
}

func (r *answerReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.eos {
			return 0, io.EOF
		}
		r.err = r.receive()
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// receive takes the next message of the answer.
func (r *answerReader) receive() error {
	ctx, cancel := context.WithTimeout(r.ctx, r.c.Wait)
	defer cancel()
	m, err := r.sub.NextMsgWithContext(ctx)
	switch {
	case err == nil:
	case r.ctx.Err() != nil:
		return context.Cause(r.ctx)
	case errors.Is(err, nats.ErrNoResponders):
		return newError(503, fmt.Sprintf("no query service answers on %s (is the ingester running with -query?)", r.c.subject))
	case errors.Is(err, context.DeadlineExceeded):
		return newError(503, fmt.Sprintf("no answer from the query service on %s for %s", r.c.subject, r.c.Wait))
	default:
		return fmt.Errorf("receive the answer: %w", err)
	}
	if m.Header.Get("Status") == "503" && len(m.Data) == 0 {
		return newError(503, fmt.Sprintf("no query service answers on %s (is the ingester running with -query?)", r.c.subject))
	}
	if err := r.c.heard(m.Header.Get(HeaderDatabase)); err != nil {
		return err
	}
	if code := m.Header.Get(HeaderErrorCode); code != "" {
		return errorFromHeader(code, m.Header.Get(HeaderError))
	}
	seq, err := strconv.Atoi(m.Header.Get(HeaderSeq))
	if err != nil || seq != r.next {
		return fmt.Errorf("%w: got message %q, want %d (a message was lost: the client may be too slow for its pending limits)", ErrProtocol, m.Header.Get(HeaderSeq), r.next)
	}
	if seq == 0 {
		r.flow = m.Header.Get(HeaderFlow)
	}
	r.next++
	r.bytes += int64(len(m.Data))
	r.cur = m.Data
	if m.Header.Get(HeaderEOS) == "true" {
		r.eos = true
		r.rows, _ = strconv.ParseInt(m.Header.Get(HeaderRows), 10, 64)
		r.truncated = m.Header.Get(HeaderTruncated) == "true"
		return nil
	}
	if r.flow != "" {
		if err := r.c.nc.Publish(r.flow, []byte(strconv.Itoa(seq))); err != nil {
			return fmt.Errorf("ack answer message %d: %w", seq, err)
		}
	}
	return nil
}

// failure prefers the answer's own error to what a decoder made of it.
func (r *answerReader) failure(err error) error {
	if r.err != nil {
		return r.err
	}
	return err
}

// decode reads the answer as an Arrow stream.
func (r *answerReader) decode() (*Result, error) {
	mem := memory.NewGoAllocator()
	rd, err := ipc.NewReader(r, ipc.WithAllocator(mem))
	if err != nil {
		return nil, r.failure(fmt.Errorf("%w: read the Arrow schema: %v", ErrProtocol, err))
	}
	defer rd.Release()
	cols, types, err := typesOf(rd.Schema())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	res := &Result{Columns: cols, Types: types}
	for rd.Next() {
		if res.Rows, err = recordRows(res.Rows, rd.RecordBatch(), types); err != nil {
			return nil, fmt.Errorf("decode the answer: %w", err)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, r.failure(fmt.Errorf("%w: read the Arrow stream: %v", ErrProtocol, err))
	}
	// The last message may carry only the trailer.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, r.failure(err)
	}
	if int64(len(res.Rows)) != r.rows {
		return nil, fmt.Errorf("%w: %d rows decoded, the service sent %d", ErrProtocol, len(res.Rows), r.rows)
	}
	res.Truncated = r.truncated
	return res, nil
}
