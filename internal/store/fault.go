package store

import (
	"errors"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Fault says whose fault an error of a write is, and so what may be done
// about it.
type Fault int

const (
	// FaultEnvironment: the database or the machine failed (I/O, disk full,
	// out of memory, an interrupted or conflicting transaction, a closed
	// or invalidated database, or an error we cannot attribute). The same
	// write may succeed later; the events in it must never be
	// dead-lettered for it.
	FaultEnvironment Fault = iota
	// FaultEvent: the content of an event caused the error (a value out of
	// a column's range, a failed conversion, a constraint). Writing the same
	// event again fails the same way; it may be dead-lettered.
	FaultEvent
)

func (f Fault) String() string {
	if f == FaultEvent {
		return "event"
	}
	return "environment"
}

// eventTypes are DuckDB's error kinds that the data of a statement causes.
// Every other kind — IO, Out of Memory, INTERRUPT, TransactionContext, FATAL,
// INTERNAL, Connection, and the ones a bug in our own SQL would raise
// (Catalog, Binder, Parser…) — is the environment's: retried, never blamed
// on an event.
var eventTypes = map[duckdb.ErrorType]bool{
	duckdb.ErrorTypeOutOfRange:   true,
	duckdb.ErrorTypeConversion:   true,
	duckdb.ErrorTypeDecimal:      true,
	duckdb.ErrorTypeMismatchType: true,
	duckdb.ErrorTypeDivideByZero: true,
	duckdb.ErrorTypeObjectSize:   true,
	duckdb.ErrorTypeInvalidType:  true,
	duckdb.ErrorTypeConstraint:   true,
	duckdb.ErrorTypeInvalidInput: true,
}

// eventError marks an error the store found in an event before DuckDB saw
// it (a value the appender cannot convert, extension attributes that do not
// encode).
type eventError struct{ err error }

func (e *eventError) Error() string { return e.err.Error() }
func (e *eventError) Unwrap() error { return e.err }

// FaultOf classifies an error returned by Write, WriteIsolating or
// RefreshFacts. An error is the event's only when every error joined in it
// is: one environment error anywhere (a rollback that failed, say) makes
// the whole the environment's. Errors the store cannot attribute are the
// environment's, so that nothing valid is dead-lettered by mistake.
func FaultOf(err error) Fault {
	if err == nil {
		return FaultEnvironment
	}
	if f, ok := faultOf(err); ok {
		return f
	}
	return FaultEnvironment
}

// faultOf walks the error tree; ok is false when no node says.
func faultOf(err error) (Fault, bool) {
	var de *duckdb.Error
	switch e := err.(type) {
	case *duckdb.Error:
		de = e
	case *eventError:
		return FaultEvent, true
	}
	if de != nil {
		if eventTypes[de.Type] && !invalidated(de) {
			return FaultEvent, true
		}
		return FaultEnvironment, true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		decided := false
		for _, e := range u.Unwrap() {
			f, ok := faultOf(e)
			if !ok || f == FaultEnvironment {
				return FaultEnvironment, true
			}
			decided = true
		}
		return FaultEvent, decided
	case interface{ Unwrap() error }:
		return faultOf(u.Unwrap())
	}
	return FaultEnvironment, false
}

// invalidated says whether err means the database instance is unusable
// until it is opened again: DuckDB invalidates a database after a FATAL or
// INTERNAL error, and every later statement fails with a message saying so.
func invalidated(err error) bool {
	var de *duckdb.Error
	if errors.As(err, &de) && (de.Type == duckdb.ErrorTypeFatal || de.Type == duckdb.ErrorTypeInternal) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "database has been invalidated")
}
