// Package fakemodel is a scripted model server for driving real agent CLIs
// and frameworks in tests: an Anthropic Messages API (POST /v1/messages,
// streamed as server-sent events or not, as Claude Code calls it), an
// OpenAI Responses API (POST /v1/responses, streamed, as Codex calls it
// with wire_api = "responses") and an OpenAI Chat Completions API (POST
// /v1/chat/completions, streamed or not, as the openai npm client and the
// JavaScript agent frameworks call it). Each model request that the script takes is
// answered with the script's next Step: text, tool calls, or both, whose
// names and inputs are the script's; every request is recorded, so a test
// can read what the client sent (the tools it offered, the tool results it
// returned). The clients' side requests (token counting, model listing)
// are answered without using up a step.
//
// The server never decides anything on its own: a request past the end of
// the script is answered with an error (Claude Code and Codex do not retry
// a 400) and reported by Err, so a test finds out when the client asked for
// more than the script says.
package fakemodel

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Call is one tool call of a Step. The server sends Name and Input (as
// JSON) as the model's call; ID is the call's id, derived from the step
// and the call's place in it when empty.
type Call struct {
	ID    string
	Name  string
	Input any
	// Custom sends the call as a Responses API custom (freeform) tool
	// call, whose input is Input as it is, a string (Codex's code-mode
	// exec tool takes JavaScript). The Messages API has no such call.
	Custom bool
}

// Step is one model turn: the answer to one scripted request. Text, when
// not empty, comes first; then the calls, in order. A step without calls
// ends the client's turn (stop_reason end_turn, a Responses output with no
// function call).
type Step struct {
	Text  string
	Calls []Call
}

// Request is one HTTP request the server received, with the step that
// answered it.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Step is the index in the script of the step that answered the
	// request, or -1 when none did (a side request, a request past the
	// script's end, an unknown path).
	Step int
	// Status is the HTTP status the server answered with.
	Status int
	// Usage is the token usage the answer reported (zero when it
	// reported none).
	Usage Usage
}

// JSON decodes the request body into v.
func (r Request) JSON(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("decode body of %s %s: %w", r.Method, r.Path, err)
	}
	return nil
}

// Config configures a Server.
type Config struct {
	// Script is answered one step per scripted request, in order.
	Script []Step
	// Scripted reports whether a model request (a POST of
	// /v1/messages, /v1/responses or /v1/chat/completions) takes the next step. A request it
	// refuses is a side request, answered with SideText and recorded with
	// Step -1. Nil: every model request is scripted.
	Scripted func(Request) bool
	// SideText is the text of the answer to a side request; "OK" when
	// empty.
	SideText string
	// Model is the model name the answers report; "fake-model" when empty.
	Model string
	// Expected reports whether a request of a path the server has no
	// answer for is one the test expects: it is answered 404 and
	// recorded all the same, but not reported by Err. Nil: none is.
	Expected func(Request) bool
}

// ErrScriptExhausted is reported by Server.Err when a client asked for a
// step past the end of the script.
var ErrScriptExhausted = errors.New("fakemodel: script exhausted")

// Server is a running fake model server. Close stops it.
type Server struct {
	cfg  Config
	l    net.Listener
	http *http.Server
	done chan struct{}

	mu       sync.Mutex
	next     int
	requests []Request
	errs     []error
}

// Listen starts a Server on a free port of 127.0.0.1.
func Listen(cfg Config) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	return Serve(l, cfg), nil
}

// Serve starts a Server on l (a listener opened elsewhere, say in another
// network namespace) and takes l over: Close closes it.
func Serve(l net.Listener, cfg Config) *Server {
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	if cfg.SideText == "" {
		cfg.SideText = "OK"
	}
	s := &Server{cfg: cfg, l: l, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/", s.unknown)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(l) // ErrServerClosed once Close is called
	}()
	return s
}

// URL is the server's base URL, http://127.0.0.1:port, without a path.
func (s *Server) URL() string { return "http://" + s.l.Addr().String() }

// Close stops the server, ending open connections, and waits for it.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.done
	return err
}

// Requests returns every request received so far, in the order they
// arrived.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Scripted returns the requests a step answered, in the script's order.
func (s *Server) Scripted() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Step >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// Answered is the number of steps answered so far.
func (s *Server) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Usage is the sum of the usage the server reported in its answers so
// far: what a client that counts every answer's tokens counts.
func (s *Server) Usage() Usage {
	var u Usage
	for _, r := range s.Requests() {
		u = u.Add(r.Usage)
	}
	return u
}

// Err reports every request the server could not answer as asked: one past
// the script's end (ErrScriptExhausted), to an unknown path, or with a body
// it could not read. Nil when there was none.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// take records r and decides which step answers it: the next one when
// scripted is true, -1 for a side request. A scripted request past the
// script's end is recorded as an error and answered by no step. The
// record's index is for answered.
func (s *Server) take(r *http.Request, body []byte, scripted bool) (int, Request, *Step, error) {
	req := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Step: -1}
	if scripted && s.cfg.Scripted != nil {
		scripted = s.cfg.Scripted(req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var step *Step
	var err error
	if scripted {
		if s.next < len(s.cfg.Script) {
			req.Step = s.next
			step = &s.cfg.Script[s.next]
			s.next++
		} else {
			err = fmt.Errorf("%w: request %d of %s asks for step %d of %d", ErrScriptExhausted, len(s.requests), r.URL.Path, s.next, len(s.cfg.Script))
			s.errs = append(s.errs, err)
		}
	}
	s.requests = append(s.requests, req)
	return len(s.requests) - 1, req, step, err
}

// answered records the status request i was answered with.
func (s *Server) answered(i, status int) { s.answeredWith(i, status, Usage{}) }

// answeredWith records the status request i was answered with and the
// usage the answer reported.
func (s *Server) answeredWith(i, status int, u Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[i].Status = status
	s.requests[i].Usage = u
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	body, _ := readBody(r)
	i, req, _, _ := s.take(r, body, false)
	if s.cfg.Expected == nil || !s.cfg.Expected(req) {
		s.fail(fmt.Errorf("fakemodel: no answer for %s %s", r.Method, r.URL.Path))
	}
	http.Error(w, "fakemodel: unknown path", http.StatusNotFound)
	s.answered(i, http.StatusNotFound)
}

// callID is the id of call i of step n, the call's own when set.
func callID(prefix string, n, i int, c Call) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("%s_fake_%02d_%d", prefix, n, i)
}

// inputJSON is the call's input as JSON, {} when nil.
func inputJSON(c Call) (string, error) {
	if c.Input == nil {
		return "{}", nil
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return "", fmt.Errorf("encode input of call %s: %w", c.Name, err)
	}
	return string(b), nil
}

// tokens is a rough token count of a request body: four bytes a token.
func tokens(body []byte) int { return len(body)/4 + 1 }

// turn is a scripted model request in hand: its number, the request, the
// step that answers it, its body, the model to answer as and whether it
// asked for a stream.
type turn struct {
	i      int
	req    Request
	step   *Step
	body   []byte
	model  string
	stream bool
}

// begin reads a model request to path and takes the script's step for it.
// On a problem it answers with refuse (the API's own error shape) and
// returns false.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, path string, refuse func(w http.ResponseWriter, status int, kind, msg string)) (turn, bool) {
	body, err := readBody(r)
	if err != nil {
		s.fail(err)
		refuse(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return turn{}, false
	}
	var in struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		err = fmt.Errorf("decode %s request: %w", path, err)
		s.fail(err)
		refuse(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return turn{}, false
	}
	i, req, step, err := s.take(r, body, true)
	if err != nil {
		refuse(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		s.answered(i, http.StatusBadRequest)
		return turn{}, false
	}
	if step == nil {
		step = &Step{Text: s.cfg.SideText}
	}
	return turn{i: i, req: req, step: step, body: body, model: cmp.Or(in.Model, s.cfg.Model), stream: in.Stream}, true
}
