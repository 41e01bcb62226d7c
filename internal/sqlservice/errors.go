package sqlservice

import (
	"errors"
	"strconv"
)

// Error is a query the service (or Local) did not answer. Code is the
// value of the Nats-Service-Error-Code header, an HTTP-like status; compare
// with the sentinels using errors.Is.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return codeText[e.Code]
	}
	return e.Message
}

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// The sentinels, by the code they stand for.
var (
	// ErrBadRequest: the request is malformed: not JSON, an unknown format,
	// a parameter that cannot be decoded or is missing, an empty query.
	ErrBadRequest = &Error{Code: 400}
	// ErrRefused: the query is not a plain read — not exactly one SELECT
	// statement, or it names a function that changes state, or DuckDB's own
	// guard (no files, no extensions, no settings) stopped it.
	ErrRefused = &Error{Code: 403}
	// ErrTimeout: the query ran past its time limit and was cancelled.
	ErrTimeout = &Error{Code: 408}
	// ErrTooLarge: a JSON answer does not fit in one NATS message.
	ErrTooLarge = &Error{Code: 413}
	// ErrSQL: DuckDB could not parse, bind or run the query.
	ErrSQL = &Error{Code: 422}
	// ErrTwoDatabases: answers on one subject came from two databases (two
	// ingesters with different databases share a query subject); the
	// Client returns it for the first answer from the second database.
	ErrTwoDatabases = &Error{Code: 409}
	// ErrInternal: the service failed (a bug or a broken connection).
	ErrInternal = &Error{Code: 500}
	// ErrUnavailable: no service answers on the subject, or it is busy or
	// stopping.
	ErrUnavailable = &Error{Code: 503}
)

var codeText = map[int]string{
	400: "bad request",
	403: "refused: the query service only reads",
	408: "query timed out",
	409: "answers from two databases",
	413: "result too large",
	422: "SQL error",
	500: "internal error",
	503: "query service unavailable",
}

// ErrProtocol is returned by the Client when an answer breaks the protocol
// (a message missing or out of order, a malformed Arrow stream).
var ErrProtocol = errors.New("query service protocol error")

func newError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// errorFromHeader rebuilds an *Error from the micro error headers.
func errorFromHeader(code, desc string) *Error {
	c, err := strconv.Atoi(code)
	if err != nil {
		c = 500
	}
	return newError(c, desc)
}

// asError classifies err: an *Error stays as it is, anything else is
// internal.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return newError(500, err.Error())
}
