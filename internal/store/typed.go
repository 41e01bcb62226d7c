package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/queries"
)

// The write path of a batch: each accepted event's row of events, and its
// rows of the typed tables read from the data Decode already parsed
// (events.Event.Payload), go through one Appender per table, flushed inside
// the batch's transaction. queries/derive/*.sql define the same rows in SQL
// from the event log: Rebuild runs them, and the tests check that both give
// the same tables (typed_test.go). A column's meaning is theirs: NULL where
// the SQL reads an absent member, the empty string where the member is an
// empty string (events.Members), 1-based positions, is_new as plan_tasks.sql
// computes it.

// typedTables are the typed tables in the order they are flushed, with
// their appender's field.
var typedTables = []struct {
	name string
	app  func(*appenders) **duckdb.Appender
}{
	{"session_starts", func(a *appenders) **duckdb.Appender { return &a.sessionStarts }},
	{"plans", func(a *appenders) **duckdb.Appender { return &a.plans }},
	{"plan_tasks", func(a *appenders) **duckdb.Appender { return &a.planTasks }},
	{"replans", func(a *appenders) **duckdb.Appender { return &a.replans }},
	{"replan_dropped", func(a *appenders) **duckdb.Appender { return &a.replanDropped }},
	{"hints_stripped", func(a *appenders) **duckdb.Appender { return &a.hintsStripped }},
	{"tool_calls", func(a *appenders) **duckdb.Appender { return &a.toolCalls }},
	{"task_completions", func(a *appenders) **duckdb.Appender { return &a.taskCompletions }},
	{"depth_limits", func(a *appenders) **duckdb.Appender { return &a.depthLimits }},
	{"session_ends", func(a *appenders) **duckdb.Appender { return &a.sessionEnds }},
	{"session_usage", func(a *appenders) **duckdb.Appender { return &a.sessionUsage }},
	{"model_calls", func(a *appenders) **duckdb.Appender { return &a.modelCalls }},
	{"tool_call_args", func(a *appenders) **duckdb.Appender { return &a.toolCallArgs }},
	{"session_assignments", func(a *appenders) **duckdb.Appender { return &a.sessionAssignments }},
	{"session_rule_assignments", func(a *appenders) **duckdb.Appender { return &a.sessionRuleAssignments }},
}

// WrittenRows counts the rows a Write stores for accepted events: those of
// events and of every typed table (for the bench: rows written an event).
func (s *Store) WrittenRows(ctx context.Context) (int64, error) {
	q := "SELECT (SELECT count(*) FROM events)"
	for _, t := range typedTables {
		q += " + (SELECT count(*) FROM " + t.name + ")"
	}
	var n int64
	if err := s.DB().QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count written rows: %w", err)
	}
	return n, nil
}

// appenders are the writer connection's appenders. Whatever they buffer
// belongs to the batch being written: a failed batch must Clear them all
// (reset), or a later flush would store its rows outside the rolled-back
// transaction.
type appenders struct {
	// events runs ingest/append_events.sql over the appended rows, which
	// carry the JSON columns as VARCHAR so that the bytes are stored as
	// they are (a JSON column's appender would re-encode them).
	events *duckdb.Appender
	// factsPending runs ingest/append_facts_pending.sql over the batch's
	// sessions, each once.
	factsPending *duckdb.Appender
	dead         *duckdb.Appender

	sessionStarts, plans, planTasks, replans, replanDropped, hintsStripped,
	toolCalls, taskCompletions, depthLimits, sessionEnds,
	sessionUsage, modelCalls, toolCallArgs, sessionAssignments,
	sessionRuleAssignments *duckdb.Appender
}

// all returns a pointer to every appender field.
func (a *appenders) all() []**duckdb.Appender {
	out := []**duckdb.Appender{&a.events, &a.factsPending, &a.dead}
	for _, t := range typedTables {
		out = append(out, t.app(a))
	}
	return out
}

// eventColumns are the columns of events, as the events appender takes
// them (ingest/append_events.sql names them).
var eventColumns = []struct {
	name string
	typ  duckdb.Type
}{
	{"source", duckdb.TYPE_VARCHAR},
	{"id", duckdb.TYPE_VARCHAR},
	{"type", duckdb.TYPE_VARCHAR},
	{"time", duckdb.TYPE_TIMESTAMP_TZ},
	{"session", duckdb.TYPE_VARCHAR},
	{"seq", duckdb.TYPE_BIGINT},
	{"data", duckdb.TYPE_VARCHAR},
	{"agent", duckdb.TYPE_VARCHAR},
	{"ext", duckdb.TYPE_VARCHAR},
	{"subject", duckdb.TYPE_VARCHAR},
	{"stream_seq", duckdb.TYPE_UBIGINT},
	{"ingested_at", duckdb.TYPE_TIMESTAMP_TZ},
	{"key_hash", duckdb.TYPE_UBIGINT},
}

// newAppenders creates the appenders on the writer connection.
func (s *Store) newAppenders() error {
	return s.w.Raw(func(c any) error {
		dc, ok := c.(driver.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", c)
		}
		a := &s.app
		var err error
		types := make([]duckdb.TypeInfo, len(eventColumns))
		names := make([]string, len(eventColumns))
		for i, col := range eventColumns {
			names[i] = col.name
			if types[i], err = duckdb.NewTypeInfo(col.typ); err != nil {
				return fmt.Errorf("type of events.%s: %w", col.name, err)
			}
		}
		if a.events, err = duckdb.NewQueryAppender(dc, queries.MustRead("ingest/append_events.sql"), "batch_events", types, names); err != nil {
			return fmt.Errorf("appender for events: %w", err)
		}
		varchar, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
		if err != nil {
			return err
		}
		if a.factsPending, err = duckdb.NewQueryAppender(dc, queries.MustRead("ingest/append_facts_pending.sql"),
			"batch_sessions", []duckdb.TypeInfo{varchar}, []string{"session"}); err != nil {
			return fmt.Errorf("appender for facts_pending: %w", err)
		}
		if a.dead, err = duckdb.NewAppenderWithColumns(dc, "", "", "dead_letters", deadLetterColumns); err != nil {
			return fmt.Errorf("appender for dead_letters: %w", err)
		}
		for _, t := range typedTables {
			if *t.app(a), err = duckdb.NewAppender(dc, "", "", t.name); err != nil {
				return fmt.Errorf("appender for %s: %w", t.name, err)
			}
		}
		return nil
	})
}

// closeAppenders drops what the appenders still buffer and closes them.
// Every committed batch flushed its rows: anything left belongs to a batch
// that failed, and Close would flush it outside that batch's transaction
// (on a failed batch, or before the store opens its file again).
func (s *Store) closeAppenders() error {
	var errs []error
	for _, a := range s.app.all() {
		if *a != nil {
			errs = append(errs, (*a).Clear(), (*a).Close())
			*a = nil
		}
	}
	return errors.Join(errs...)
}

// appendTyped appends the rows of the typed tables that event e gives.
func (a *appenders) appendTyped(e *events.Event) error {
	p, has, err := e.PayloadMembers()
	if err != nil {
		// The data does not pass the schema of its type (an Event changed
		// after Decode): the SQL derivation would refuse it too.
		return &eventError{fmt.Errorf("read data: %w", err)}
	}
	session, at := e.Subject, e.Time.UTC()
	switch d := p.(type) {
	case *events.SessionStartedData:
		var rules any
		if d.Rules != nil {
			rules = d.Rules
		}
		if err := a.sessionStarts.AppendRow(session, e.Source, e.ID, e.Seq, at,
			d.Agent, d.AgentVersion, d.Model, d.Goal, d.Tools,
			member(has, "task_type", d.TaskType), member(has, "ruleset", d.Ruleset), rules); err != nil || d.Assignment == nil {
			return err
		}
		x := d.Assignment
		if err := a.sessionAssignments.AppendRow(session, e.Source, e.ID, e.Seq, at,
			x.Ruleset, string(x.Arm), x.Holdout, string(x.Unit), nullString(x.UnitID)); err != nil {
			return err
		}
		for i, r := range x.Rules {
			if err := a.sessionRuleAssignments.AppendRow(session, e.Source, e.ID, e.Seq, at,
				x.Ruleset, int64(i+1), r.ID, string(r.Arm), r.Holdout); err != nil {
				return err
			}
		}
		return nil
	case *events.PlanCreatedData:
		if err := a.plans.AppendRow(session, e.Source, e.ID, e.Seq, at,
			"created", nil, string(d.Origin), member(has, "parse_error", d.ParseError), int64(len(d.Tasks))); err != nil {
			return err
		}
		return a.appendPlanTasks(session, e.Seq, d.Tasks, nil, true)
	case *events.PlanUpdatedData:
		if err := a.replans.AppendRow(session, e.Source, e.ID, e.Seq, at,
			d.Replan, string(d.Trigger), member(has, "reason", d.Reason), d.Valid, d.OverCap,
			member(has, "error", d.Error), int64(len(d.Tasks)), d.Kept, int64(len(d.Dropped))); err != nil {
			return err
		}
		for i, t := range d.Dropped {
			if err := a.replanDropped.AppendRow(session, e.Seq, int64(i+1),
				t.ID, t.Description, nullable(t.ToolHint), nullString(t.TaskType)); err != nil {
				return err
			}
		}
		if !d.Valid {
			return nil
		}
		if err := a.plans.AppendRow(session, e.Source, e.ID, e.Seq, at,
			"replan", d.Replan, nil, nil, int64(len(d.Tasks))); err != nil {
			return err
		}
		return a.appendPlanTasks(session, e.Seq, d.Tasks, d.Kept, false)
	case *events.HintStrippedData:
		return a.hintsStripped.AppendRow(session, e.Source, e.ID, e.Seq, at,
			d.TaskID, d.ToolHint, string(d.Phase), string(d.Reason), member(has, "rule_id", d.RuleID))
	case *events.ToolCalledData:
		var task any
		if d.TaskID != nil {
			task = *d.TaskID
		}
		if err := a.toolCalls.AppendRow(session, e.Source, e.ID, e.Seq, at,
			task, d.Tool, nullable(d.Hint), d.OK, member(has, "error_kind", d.ErrorKind),
			member(has, "error", d.Error), d.DurationMS, d.Control); err != nil || d.ArgsDigest == "" {
			return err
		}
		return a.toolCallArgs.AppendRow(session, e.Source, e.ID, e.Seq, at, d.ArgsDigest)
	case *events.TaskCompletedData:
		return a.taskCompletions.AppendRow(session, e.Source, e.ID, e.Seq, at,
			d.TaskID, string(d.Completion), nullString(string(d.Reported)), d.ToolCalls,
			member(has, "summary", d.Summary))
	case *events.DepthLimitReachedData:
		return a.depthLimits.AppendRow(session, e.Source, e.ID, e.Seq, at, d.TaskID, d.ToolCalls, d.Limit)
	case *events.SessionEndedData:
		if err := a.sessionEnds.AppendRow(session, e.Source, e.ID, e.Seq, at,
			string(d.Outcome), d.Replans, d.ToolCalls, d.FailedToolCalls, d.Iterations, d.DurationMS,
			nullString(string(d.Feedback))); err != nil || d.Usage == nil {
			return err
		}
		u := d.Usage
		return a.sessionUsage.AppendRow(session, e.Source, e.ID, e.Seq, at, u.ModelCalls,
			nullInt(u.InputTokens), nullInt(u.OutputTokens), nullInt(u.CachedInputTokens), u.ModelMS)
	case *events.ModelCalledData:
		return a.modelCalls.AppendRow(session, e.Source, e.ID, e.Seq, at, nullInt(d.TaskID),
			member(has, "model", d.Model), nullInt(d.InputTokens), nullInt(d.OutputTokens),
			nullInt(d.CachedInputTokens), d.DurationMS)
	}
	return &eventError{fmt.Errorf("no typed table for data %T", p)}
}

// appendPlanTasks appends the tasks of one plan version. A task is new
// unless the plan is a replan that kept its id (kept lists the ids of the
// kept tasks, possibly repeated or naming no task).
func (a *appenders) appendPlanTasks(session string, seq int64, tasks []events.Task, kept []int64, created bool) error {
	isKept := keptSet(kept)
	for i, t := range tasks {
		if err := a.planTasks.AppendRow(session, seq, int64(i+1), t.ID, t.Description,
			nullable(t.ToolHint), t.Completed, nullString(t.TaskType), created || !isKept(t.ID)); err != nil {
			return err
		}
	}
	return nil
}

// keptSet returns membership in kept: a scan of the list when it is short,
// a map otherwise, so that a large replan costs its size, not its square.
func keptSet(kept []int64) func(int64) bool {
	if len(kept) <= 16 {
		return func(id int64) bool {
			for _, k := range kept {
				if k == id {
					return true
				}
			}
			return false
		}
	}
	m := make(map[int64]struct{}, len(kept))
	for _, k := range kept {
		m[k] = struct{}{}
	}
	return func(id int64) bool { _, ok := m[id]; return ok }
}

// member is an optional string member of an event's data: NULL when
// absent, its value (which may be empty) when present.
func member(has events.Members, name, value string) any {
	if value == "" && !has.Has(name) {
		return nil
	}
	return value
}

// nullInt is an optional or nullable integer member: NULL when absent or
// null.
func nullInt(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// nullable is a nullable string member: NULL for JSON null.
func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// flushError is an appender's flush error as FaultOf must see it: the
// DuckDB error inside, without the driver's wrapping (which FaultOf cannot
// attribute, and so counts as the environment's), and with its kind when a
// constraint refused the rows (see appenderConstraint).
func flushError(err error) error {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return err
	}
	if appenderConstraint(de) {
		return &duckdb.Error{Type: duckdb.ErrorTypeConstraint, Msg: de.Msg}
	}
	return de
}

// appendError is an error of AppendRow as FaultOf must see it: a DuckDB
// error (the appender passed a full chunk on, which may flush rows) as
// flushError says, any other the appender's refusal to convert a value,
// the event's.
func appendError(err error) error {
	var de *duckdb.Error
	if errors.As(err, &de) {
		return flushError(err)
	}
	return &eventError{err}
}

// appenderConstraint says whether an appender's error is a constraint that
// refused its rows (a unique index, NOT NULL, CHECK, a foreign key): the
// events' fault. DuckDB's C API reports an appender's errors as text
// without their kind ("Failed to append: Duplicate key ... violates unique
// constraint."), which duckdb-go makes an error of kind Invalid; a SQL
// statement would have raised a Constraint error. Any other text keeps its
// kind, the environment's.
func appenderConstraint(de *duckdb.Error) bool {
	if de.Type != duckdb.ErrorTypeInvalid {
		return false
	}
	msg, ok := strings.CutPrefix(de.Msg, "Failed to append: ")
	if !ok {
		return false
	}
	for _, phrase := range []string{"constraint violation", "violates unique constraint", "violates primary key constraint",
		"NOT NULL constraint failed", "CHECK constraint failed", "foreign key constraint"} {
		if strings.Contains(msg, phrase) {
			return true
		}
	}
	return false
}
