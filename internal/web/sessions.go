package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Outcomes the list filters by ("open": not ended), and the stuck states of
// analyze/stuck_states.sql.
var (
	listOutcomes = []string{"success", "partial_success", "failure", "aborted", "timeout", "unknown", "open"}
	stuckStates  = []string{"loop", "churn", "depth_limit", "soft_cap", "pending_at_end"}
)

// listQuery is the session list's own filter, beside the window's.
type listQuery struct {
	Q, Outcome, Hint, Stuck string
	MinReplans              string
	minReplans              *int64
	// The keyset cursors: after the last row of the page before (Next),
	// or before the first row of the page after (Previous).
	afterAt, beforeAt        time.Time
	afterSession, beforeSess string
}

func parseList(q url.Values) (listQuery, error) {
	l := listQuery{Q: strings.TrimSpace(q.Get("q")), Outcome: q.Get("outcome"), Hint: q.Get("hint"), Stuck: q.Get("stuck"),
		MinReplans: q.Get("min_replans")}
	var errs []error
	if l.Outcome != "" && !slices.Contains(listOutcomes, l.Outcome) {
		errs = append(errs, fmt.Errorf("outcome %q: want one of %s", l.Outcome, strings.Join(listOutcomes, ", ")))
	}
	if l.Stuck != "" && !slices.Contains(stuckStates, l.Stuck) {
		errs = append(errs, fmt.Errorf("stuck %q: want one of %s", l.Stuck, strings.Join(stuckStates, ", ")))
	}
	if l.MinReplans != "" {
		n, err := strconv.ParseInt(l.MinReplans, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("min_replans %q: want a whole number, 0 or more", l.MinReplans))
		}
		l.minReplans = &n
	}
	cursor := func(key string) time.Time {
		a := q.Get(key)
		if a == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, a)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: want an RFC 3339 time", key, a))
		}
		return t
	}
	l.afterAt, l.afterSession = cursor("after_at"), q.Get("after")
	l.beforeAt, l.beforeSess = cursor("before_at"), q.Get("before")
	if !l.afterAt.IsZero() && !l.beforeAt.IsZero() {
		errs = append(errs, errors.New("after_at and before_at: want one cursor, not both"))
	}
	if err := errors.Join(errs...); err != nil {
		return l, badRequest("%v", err)
	}
	return l, nil
}

// listRow is one session of the list.
type listRow struct {
	Session, Agent, Model, TaskType, Ruleset, Goal, Outcome string
	Started                                                 time.Time
	Ended                                                   bool
	Replans, Rejected, Calls, Failed, Stripped              int64
	OverCap                                                 bool
}

type sessionsPage struct {
	Frame
	Filter   filter
	Dims     []options
	List     listQuery
	Outcomes []string
	States   []string
	Rows     []listRow
	Next     string // the next page's URL; empty on the last page
	Prev     string // the previous page's URL; empty on the first page
	First    string // the first page's URL when this is not it
}

// nullable is s, or nil when empty: a parameter that does not filter.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) sessions(ctx context.Context, r *http.Request, buf *bytes.Buffer) error {
	version, err := s.dataVersion(ctx)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f, err := parseFilter(q, s.cfg.Now())
	if err != nil {
		return err
	}
	// The list's window is open unless the form sets one.
	if q.Get("window") == "" {
		f.since = time.Time{}
		f.Window = ""
	}
	l, err := parseList(q)
	if err != nil {
		return err
	}
	mf := f.metrics()
	args := params{
		"since": nullTime(mf.Since), "until": nullTime(mf.Until), "agent": nullable(mf.Agent), "model": nullable(mf.Model),
		"task_type": nullable(mf.TaskType), "outcome": nullable(l.Outcome), "min_replans": nil, "hint": nullable(l.Hint),
		"q": nullable(l.Q), "after_at": nil, "after_session": nil, "before_at": nil, "before_session": nil,
		"limit": int64(s.cfg.PageSize + 1),
	}
	if l.minReplans != nil {
		args["min_replans"] = *l.minReplans
	}
	if !l.afterAt.IsZero() {
		args["after_at"], args["after_session"] = l.afterAt, l.afterSession
	}
	back := !l.beforeAt.IsZero()
	if back {
		args["before_at"], args["before_session"] = l.beforeAt, l.beforeSess
	}
	file := "sessions"
	if l.Stuck != "" {
		file = "sessions_stuck"
		args["stuck"] = l.Stuck
	}
	t, err := s.lookup(ctx, file, args)
	if err != nil {
		return err
	}
	if back && len(t.rows) <= s.cfg.PageSize {
		// Back at the start: the first page, full, not what is left of it.
		back, l.beforeAt = false, time.Time{}
		args["before_at"], args["before_session"] = nil, nil
		if t, err = s.lookup(ctx, file, args); err != nil {
			return err
		}
	}
	dims, err := s.dims(ctx, version)
	if err != nil {
		return err
	}
	p := sessionsPage{Frame: s.frame("Sessions · evosignal", "sessions"), Filter: f, Dims: dimOptions(dims, f), List: l,
		Outcomes: listOutcomes, States: stuckStates}
	s.live(&p.Frame, version)
	// The page's rows in the list's order: a page fetched backwards comes
	// nearest first, and the row beyond it is the one furthest back.
	n := min(len(t.rows), s.cfg.PageSize)
	beyond := len(t.rows) > s.cfg.PageSize
	rows := make([]row, n)
	for i := range n {
		rows[i] = t.row(i)
	}
	if back {
		slices.Reverse(rows)
	}
	for _, rw := range rows {
		outcome := rw.str("outcome")
		if !rw.bool("ended") {
			outcome = "open"
		}
		p.Rows = append(p.Rows, listRow{
			Session: rw.str("session"), Agent: rw.str("agent"), Model: rw.str("model"), TaskType: rw.str("task_type"),
			Ruleset: rw.str("ruleset"), Goal: rw.str("goal"), Outcome: outcome, Started: rw.time("started_at"),
			Ended: rw.bool("ended"), Replans: rw.int("valid_replans"), Rejected: rw.int("invalid_replans"),
			Calls: rw.int("real_tool_calls"), Failed: rw.int("failed_real_tool_calls"), Stripped: rw.int("stripped_hints"),
			OverCap: rw.bool("over_cap"),
		})
	}
	keep := r.URL.Query()
	for _, k := range []string{"after_at", "after", "before_at", "before"} {
		keep.Del(k)
	}
	link := func(dir string, rw row) string {
		v := url.Values{}
		for k, vs := range keep {
			v[k] = vs
		}
		v.Set(dir+"_at", rw.time("sort_at").UTC().Format(time.RFC3339Nano))
		v.Set(dir, rw.str("session"))
		return "/sessions?" + v.Encode()
	}
	// Forwards, a page beyond is a next page and the cursor says there is
	// a previous one; backwards, the other way round.
	hasNext, hasPrev := beyond, !l.afterAt.IsZero()
	if back {
		hasNext, hasPrev = true, beyond
	}
	if len(rows) > 0 {
		if hasNext {
			p.Next = link("after", rows[len(rows)-1])
		}
		if hasPrev {
			p.Prev = link("before", rows[0])
		}
	}
	if hasPrev {
		p.First = "/sessions?" + keep.Encode()
	}
	return render(buf, "sessions", p)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}
