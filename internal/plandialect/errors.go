package plandialect

import (
	"errors"
	"fmt"
)

// ErrArguments is matched (errors.Is) by every *ArgsError: a plan tool call
// whose arguments its dialect cannot read. An adapter turns it into a
// rejected attempt or a data-quality note; it never guesses the plan.
var ErrArguments = errors.New("malformed plan arguments")

// ErrPlan is returned (wrapped) by Tracker.Apply for a Plan it cannot use:
// with HasIDs, an id below 1 or repeated; or a status that is not valid.
var ErrPlan = errors.New("invalid plan")

// ArgsError says why a dialect could not read a call's arguments.
type ArgsError struct {
	Dialect string // the dialect's name
	Path    string // JSON pointer to the offending member, "" for the whole
	Msg     string
}

func (e *ArgsError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s plan arguments: %s", e.Dialect, e.Msg)
	}
	return fmt.Sprintf("%s plan arguments: %s: %s", e.Dialect, e.Path, e.Msg)
}

// Is makes errors.Is(err, ErrArguments) true.
func (e *ArgsError) Is(target error) bool { return target == ErrArguments }
