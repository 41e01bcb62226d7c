package metrics

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/evosignal/evosignal/internal/taxonomy"
)

// MappingsConfig tunes Mappings: when a task type → tool mapping is stable.
type MappingsConfig struct {
	// StableShare is the share of a window's calls the top tool must have.
	StableShare float64
	// Windows is how many of the most recent windows must agree.
	Windows int
	// Window is the length of one window.
	Window time.Duration
}

// DefaultMappingsConfig returns the documented defaults: -stable-share 0.5,
// -windows 4, -window 7d.
func DefaultMappingsConfig() MappingsConfig {
	return MappingsConfig{StableShare: 0.5, Windows: 4, Window: 7 * 24 * time.Hour}
}

// Validate reports every problem at once.
func (c MappingsConfig) Validate() error {
	var errs []error
	if !(c.StableShare > 0 && c.StableShare <= 1) {
		errs = append(errs, fmt.Errorf("-stable-share %v: want a share in (0, 1]", c.StableShare))
	}
	if c.Windows < 1 {
		errs = append(errs, fmt.Errorf("-windows %d: want at least 1", c.Windows))
	}
	if c.Window < time.Microsecond {
		errs = append(errs, fmt.Errorf("-window %s: want a positive duration", c.Window))
	}
	return errors.Join(errs...)
}

// MappingRow is one row of analyze mappings: which tools the real tool
// calls of one task type (in one group) used.
type MappingRow struct {
	Group
	Calls       int64    `json:"calls"`
	OK          int64    `json:"ok"`
	SuccessRate *float64 `json:"success_rate"`
	// TopTool is the tool with the most calls (ties: the first by name).
	TopTool  *string  `json:"top_tool"`
	TopShare *float64 `json:"top_share"`
	// Entropy of the distribution of calls over tools, in bits (0: one
	// tool only).
	Entropy float64 `json:"entropy"`
	// Stable: in each of the last Windows windows the top tool was TopTool
	// with at least StableShare of the window's calls.
	Stable  bool            `json:"stable"`
	Tools   []ToolShare     `json:"tools"`   // by calls, descending
	Windows []MappingWindow `json:"windows"` // the most recent first
}

// ToolShare is one tool's part of a task type's calls.
type ToolShare struct {
	Tool        string   `json:"tool"`
	Calls       int64    `json:"calls"`
	OK          int64    `json:"ok"`
	SuccessRate *float64 `json:"success_rate"`
	Share       *float64 `json:"share"`
}

// MappingWindow is the mapping in one window [Since, Until).
type MappingWindow struct {
	Window   int       `json:"window"` // 1: the most recent
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	Calls    int64     `json:"calls"`
	TopTool  *string   `json:"top_tool"`
	TopShare *float64  `json:"top_share"`
	// Holds: the window's top tool is the row's top tool, with at least
	// the stable share.
	Holds bool `json:"holds"`
}

// MappingsResult is the result of analyze mappings.
type MappingsResult struct {
	Rows []MappingRow
	// WindowEnd is the end of window 1: -until, or just after the start of
	// the latest session selected; zero when nothing was selected.
	WindowEnd time.Time
}

// Mappings runs queries/analyze/mappings.sql and derives shares, entropy
// and stability. Rows are ordered by group (task type first among the
// dimensions as the query orders them).
func Mappings(ctx context.Context, src Source, f Filter, tax *taxonomy.Taxonomy, cfg MappingsConfig) (*MappingsResult, error) {
	if err := errors.Join(f.Validate(), cfg.Validate()); err != nil {
		return nil, err
	}
	t, err := runClassifying(ctx, src, "analyze/mappings.sql", f, tax,
		sql.Named("window_us", cfg.Window.Microseconds()),
		sql.Named("windows", int64(cfg.Windows)))
	if err != nil {
		return nil, err
	}
	out := &MappingsResult{}
	index := map[string]int{}
	perWindow := map[string][]map[string]int64{} // group → window-1 → tool → calls
	err = eachRow(t, func(c *row) error {
		if out.WindowEnd.IsZero() {
			if end := c.int("window_end_us"); end != 0 {
				out.WindowEnd = time.UnixMicro(end).UTC()
			}
		}
		g := c.group(true)
		k := g.key()
		i, ok := index[k]
		if !ok {
			i = len(out.Rows)
			index[k] = i
			out.Rows = append(out.Rows, MappingRow{Group: g})
			perWindow[k] = make([]map[string]int64, cfg.Windows)
		}
		tool := c.need("tool")
		ts := ToolShare{Tool: tool, Calls: c.int("calls"), OK: c.int("ok")}
		out.Rows[i].Tools = append(out.Rows[i].Tools, ts)
		wins, counts := c.ints("windows"), c.ints("window_calls")
		if len(wins) != len(counts) {
			return fmt.Errorf("%d windows but %d window_calls", len(wins), len(counts))
		}
		for j, w := range wins {
			if w < 1 || w > int64(cfg.Windows) {
				continue
			}
			m := perWindow[k][w-1]
			if m == nil {
				m = map[string]int64{}
				perWindow[k][w-1] = m
			}
			m[tool] += counts[j]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	for k, i := range index {
		finishMapping(&out.Rows[i], perWindow[k], out.WindowEnd, cfg)
	}
	return out, nil
}

// finishMapping fills the totals, shares and stability of r from its tools
// and its per-window counts.
func finishMapping(r *MappingRow, windows []map[string]int64, end time.Time, cfg MappingsConfig) {
	slices.SortFunc(r.Tools, func(a, b ToolShare) int {
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		return cmp.Compare(a.Tool, b.Tool)
	})
	counts := make([]int64, len(r.Tools))
	for i, ts := range r.Tools {
		r.Calls += ts.Calls
		r.OK += ts.OK
		counts[i] = ts.Calls
	}
	for i := range r.Tools {
		r.Tools[i].SuccessRate = Rate(r.Tools[i].OK, r.Tools[i].Calls)
		r.Tools[i].Share = Rate(r.Tools[i].Calls, r.Calls)
	}
	r.SuccessRate = Rate(r.OK, r.Calls)
	r.Entropy = Entropy(counts)
	if len(r.Tools) > 0 && r.Calls > 0 {
		r.TopTool = &r.Tools[0].Tool
		r.TopShare = r.Tools[0].Share
	}
	r.Stable = r.TopTool != nil
	r.Windows = make([]MappingWindow, len(windows))
	for i, m := range windows {
		w := MappingWindow{Window: i + 1}
		if !end.IsZero() {
			w.Until = end.Add(-time.Duration(i) * cfg.Window)
			w.Since = w.Until.Add(-cfg.Window)
		}
		var best string
		for tool, n := range m {
			w.Calls += n
			if n > m[best] || n == m[best] && (best == "" || tool < best) {
				best = tool
			}
		}
		if w.Calls > 0 {
			w.TopTool = &best
			w.TopShare = Rate(m[best], w.Calls)
			w.Holds = r.TopTool != nil && best == *r.TopTool && *w.TopShare >= cfg.StableShare
		}
		r.Stable = r.Stable && w.Holds
		r.Windows[i] = w
	}
}
