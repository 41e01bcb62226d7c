package sqlservice

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Headers of the answer messages (docs/query-service.md).
const (
	HeaderSeq       = "Evo-Seq"       // 0, 1, 2, … on every message of an answer
	HeaderEOS       = "Evo-Eos"       // "true" on the last message
	HeaderRows      = "Evo-Rows"      // rows in the answer (last message)
	HeaderTruncated = "Evo-Truncated" // "true" or "false" (last message)
	HeaderFlow      = "Evo-Flow"      // first message: where the client acks
	HeaderWindow    = "Evo-Window"    // first message: messages sent ahead of the acks
	HeaderDatabase  = "Evo-Database"  // every message: the identity of the database answering
	HeaderError     = micro.ErrorHeader
	HeaderErrorCode = micro.ErrorCodeHeader
)

// stream writes an Arrow IPC stream as a sequence of messages of at most
// chunk bytes to a reply subject, at most window messages ahead of the
// client's acks.
type stream struct {
	ctx      context.Context
	nc       *nats.Conn
	reply    string
	database string
	chunk    int
	window   int
	flow     *nats.Subscription
	buf      []byte
	seq      int // of the next message
	acked    int // highest seq the client acked
	bytes    int64
}

func openStream(ctx context.Context, nc *nats.Conn, reply, database string, chunk, window int) (*stream, error) {
	flow, err := nc.SubscribeSync(nats.NewInbox())
	if err != nil {
		return nil, newError(500, fmt.Sprintf("subscribe for acks: %v", err))
	}
	return &stream{ctx: ctx, nc: nc, reply: reply, database: database, chunk: chunk, window: window, flow: flow, acked: -1}, nil
}

// Write buffers p and sends every full chunk.
func (s *stream) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	off := 0
	for len(s.buf)-off >= s.chunk {
		if err := s.send(s.buf[off:off+s.chunk], nil, true); err != nil {
			return 0, err
		}
		off += s.chunk
	}
	s.buf = append(s.buf[:0], s.buf[off:]...)
	return len(p), nil
}

// send publishes one message; with wait, it first waits until the client
// acked enough of the earlier ones.
func (s *stream) send(data []byte, h nats.Header, wait bool) error {
	for wait && s.seq-s.acked > s.window {
		m, err := s.flow.NextMsgWithContext(s.ctx)
		if err != nil {
			return ctxError(s.ctx, newError(500, fmt.Sprintf("wait for the client's ack: %v", err)))
		}
		if n, err := strconv.Atoi(string(m.Data)); err == nil && n > s.acked {
			s.acked = n
		}
	}
	if h == nil {
		h = nats.Header{}
	}
	h.Set(HeaderSeq, strconv.Itoa(s.seq))
	h.Set(HeaderDatabase, s.database)
	if s.seq == 0 {
		h.Set(HeaderFlow, s.flow.Subject)
		h.Set(HeaderWindow, strconv.Itoa(s.window))
	}
	if err := s.nc.PublishMsg(&nats.Msg{Subject: s.reply, Data: data, Header: h}); err != nil {
		return newError(500, fmt.Sprintf("publish answer message %d: %v", s.seq, err))
	}
	s.seq++
	s.bytes += int64(len(data))
	return nil
}

// finish sends what is buffered as the last message.
func (s *stream) finish(out outcome) error {
	h := nats.Header{}
	h.Set(HeaderEOS, "true")
	h.Set(HeaderRows, strconv.FormatInt(out.rows, 10))
	h.Set(HeaderTruncated, strconv.FormatBool(out.truncated))
	return s.send(s.buf, h, true)
}

// fail ends the answer with an error message, without waiting for acks
// (the client may be gone, or the time up).
func (s *stream) fail(e *Error) error {
	h := nats.Header{}
	h.Set(HeaderEOS, "true")
	h.Set(HeaderError, e.Error())
	h.Set(HeaderErrorCode, strconv.Itoa(e.Code))
	return s.send(nil, h, false)
}

func (s *stream) close() { s.flow.Unsubscribe() }

// arrowSink encodes rows as Arrow record batches into a stream.
type arrowSink struct {
	w         *ipc.Writer
	out       *stream
	rb        *array.RecordBuilder
	app       []appendFunc
	rows      int // in the batch being built
	size      int // approximate bytes of the batch being built
	batchRows int
	batchSize int
}

func (s *arrowSink) columns(names []string, types []*Type) error {
	mem := memory.NewGoAllocator()
	schema := Schema(names, types)
	s.rb = array.NewRecordBuilder(mem, schema)
	s.app = make([]appendFunc, len(types))
	for i, t := range types {
		s.app[i] = newAppender(t, s.rb.Field(i))
	}
	s.w = ipc.NewWriter(s.out, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	return nil
}

func (s *arrowSink) row(vals []driver.Value) error {
	for i, v := range vals {
		if err := s.app[i](v); err != nil {
			return newError(500, fmt.Sprintf("encode column %d: %v", i+1, err))
		}
		switch x := v.(type) {
		case string:
			s.size += len(x)
		case []byte:
			s.size += len(x)
		default:
			s.size += 8
		}
	}
	s.rows++
	if s.rows >= s.batchRows || s.size >= s.batchSize {
		return s.flush()
	}
	return nil
}

func (s *arrowSink) flush() error {
	rec := s.rb.NewRecordBatch()
	defer rec.Release()
	s.rows, s.size = 0, 0
	if err := s.w.Write(rec); err != nil {
		return asError(err)
	}
	return nil
}

// close writes the last batch and the end-of-stream marker into the stream's
// buffer.
func (s *arrowSink) close() error {
	if s.rb == nil {
		return nil
	}
	defer s.rb.Release()
	if s.rows > 0 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if err := s.w.Close(); err != nil {
		return asError(err)
	}
	return nil
}
