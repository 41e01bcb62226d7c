package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
)

// The analyzers' tables: each analyzer's rows in its JSON shape (the one
// `analyze NAME -format json` prints), one column per field, nested
// fields as parent.child, intervals as one column; sortable by any column
// (server side, so that it works without JavaScript).

// anTable is one table of an analyzer page.
type anTable struct {
	ID, Caption string
	Cols        []anCol
	Rows        [][]anCell
	Empty       string
}

type anCol struct {
	Key, Href string
	Num       bool
	Sort      string // ascending, descending or "" (aria-sort)
}

type anCell struct {
	Text string
	num  *float64 // the value sorted by; nil: text or null
	null bool
}

type tablePage struct {
	Frame
	Title, Lede string
	Filter      filter
	Dims        []options
	Tables      []anTable
}

// analyzerPages are the tables /analyze/{table} serves, with what they show.
var analyzerPages = map[string]struct{ title, lede string }{
	"hints":    {"Hints", "Per task type, every tool hint of the window's real tool calls with its failure rate (95% Wilson interval), against the type's other calls: lift, Fisher's exact or chi-square p, how often it was followed, dropped and stripped (analyze hints)."},
	"mappings": {"Task type → tool", "Which tools each task type's real calls used, the top tool's share and whether it held over the windows (analyze mappings, windows of the page's window)."},
	"rules":    {"Rules", "The hint rules learned from the window's sessions, with their evidence (analyze rules)."},
	"effects":  {"Rule effects", "Each rule set and rule: the sessions that ran with it against matched sessions without, per metric with 95% intervals and a verdict (analyze effect); then the randomised effects, rules arm against holdout arm (analyze effect -randomised)."},
}

func (s *Server) table(ctx context.Context, r *http.Request, buf *bytes.Buffer) error {
	name := r.PathValue("table")
	meta, ok := analyzerPages[name]
	if !ok {
		return &httpError{http.StatusNotFound, "no analyzer table " + strconv.Quote(name) + "; there are hints, mappings, rules and effects"}
	}
	q := r.URL.Query()
	f, err := parseFilter(q, s.cfg.Now())
	if err != nil {
		return err
	}
	mf := f.metrics()
	var tables []anTable
	add := func(id, caption, empty string, rows any) error {
		t, err := flatten(rows)
		if err != nil {
			return err
		}
		t.ID, t.Caption, t.Empty = id, caption, empty
		tables = append(tables, t)
		return nil
	}
	switch name {
	case "hints":
		rows, err := metrics.Hints(ctx, s.src(), mf, s.cfg.Taxonomy, metrics.DefaultHintsConfig())
		if err != nil {
			return fmt.Errorf("hints: %w", err)
		}
		err = add("hints", "Hints", "No tool call in the window.", rows)
		if err != nil {
			return err
		}
	case "mappings":
		mc := metrics.DefaultMappingsConfig()
		mc.Window = f.until.Sub(f.since)
		res, err := metrics.Mappings(ctx, s.src(), mf, s.cfg.Taxonomy, mc)
		if err != nil {
			return fmt.Errorf("mappings: %w", err)
		}
		if err := add("mappings", "Task type → tool", "No tool call in the window.", res.Rows); err != nil {
			return err
		}
	case "rules":
		rs, err := metrics.LearnRules(ctx, s.src(), mf, s.cfg.Taxonomy, metrics.DefaultRulesConfig(), s.cfg.Now())
		if err != nil {
			return fmt.Errorf("rules: %w", err)
		}
		if err := add("rules", "Rules of "+rs.Version, "No rule is learned from the window's sessions.", rs.Rules); err != nil {
			return err
		}
	case "effects":
		ec := metrics.DefaultEffectConfig()
		res, err := metrics.Effect(ctx, s.src(), mf, ec)
		if err != nil {
			return fmt.Errorf("effect: %w", err)
		}
		if err := add("effects", "Rule effects", "No session of the window ran with rules.", res.Rows); err != nil {
			return err
		}
		rnd, err := metrics.Randomised(ctx, s.src(), mf, ec.Metric)
		if err != nil {
			return fmt.Errorf("randomised effect: %w", err)
		}
		if err := add("randomised", "Randomised effects", "No session of the window had a holdout arm.", rnd); err != nil {
			return err
		}
	}
	sortKey, desc := q.Get("sort"), q.Get("desc") == "1"
	for i := range tables {
		tables[i].sortBy(sortKey, desc, r.URL)
	}
	version, err := s.dataVersion(ctx)
	if err != nil {
		return err
	}
	dims, err := s.dims(ctx, version)
	if err != nil {
		return err
	}
	p := tablePage{Frame: s.frame(meta.title+" · evosignal", name), Title: meta.title, Lede: meta.lede,
		Filter: f, Dims: dimOptions(dims, f), Tables: tables}
	return render(buf, "table", p)
}

// sortBy sorts the rows by column key (nulls last), and sets each column's
// link to sort by it (the other way round when it is the one sorted by).
func (t *anTable) sortBy(key string, desc bool, u *url.URL) {
	col := slices.IndexFunc(t.Cols, func(c anCol) bool { return c.Key == key })
	if col >= 0 {
		slices.SortStableFunc(t.Rows, func(a, b []anCell) int {
			x, y := a[col], b[col]
			switch {
			case x.null || y.null:
				return cmp.Compare(boolInt(x.null), boolInt(y.null)) // nulls last either way
			case x.num != nil && y.num != nil:
				c := cmp.Compare(*x.num, *y.num)
				if desc {
					c = -c
				}
				return c
			}
			c := strings.Compare(x.Text, y.Text)
			if desc {
				c = -c
			}
			return c
		})
	}
	for i := range t.Cols {
		q := u.Query()
		q.Set("sort", t.Cols[i].Key)
		q.Del("desc")
		if i == col {
			t.Cols[i].Sort = "ascending"
			if desc {
				t.Cols[i].Sort = "descending"
			} else {
				q.Set("desc", "1")
			}
		}
		t.Cols[i].Href = "?" + q.Encode() + "#" + t.ID
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// field is one key and value of a JSON object, in order.
type field struct {
	key string
	val json.RawMessage
}

// objectFields decodes a JSON object keeping the order of its keys.
func objectFields(raw json.RawMessage) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{k.(string), v})
	}
	return out, true
}

// flatten lays out rows (a slice of the analyzer's row type) as a table:
// the columns in the order of the first row's fields (and any later ones
// after), nested objects as parent.child, an interval ({lo, hi}) as one
// cell.
func flatten(rows any) (anTable, error) {
	b, err := json.Marshal(rows)
	if err != nil {
		return anTable{}, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err != nil {
		return anTable{}, err
	}
	var t anTable
	index := map[string]int{}
	var cells []map[string]anCell
	for _, raw := range list {
		m := map[string]anCell{}
		var walk func(prefix string, fs []field)
		walk = func(prefix string, fs []field) {
			for _, f := range fs {
				key := prefix + f.key
				if sub, ok := objectFields(f.val); ok && !isInterval(sub) {
					walk(key+".", sub)
					continue
				}
				if _, ok := index[key]; !ok {
					index[key] = len(t.Cols)
					t.Cols = append(t.Cols, anCol{Key: key})
				}
				m[key] = cell(key, f.val)
			}
		}
		fs, ok := objectFields(raw)
		if !ok {
			return anTable{}, fmt.Errorf("an analyzer row is not an object: %.80s", raw)
		}
		walk("", fs)
		cells = append(cells, m)
	}
	for _, m := range cells {
		r := make([]anCell, len(t.Cols))
		for i, c := range t.Cols {
			if v, ok := m[c.Key]; ok {
				r[i] = v
			} else {
				r[i] = anCell{Text: "–", null: true}
			}
		}
		t.Rows = append(t.Rows, r)
	}
	for i, c := range t.Cols {
		num := len(t.Rows) > 0
		for _, r := range t.Rows {
			if !r[i].null && r[i].num == nil {
				num = false
			}
		}
		t.Cols[i].Num = num && c.Key != ""
	}
	return t, nil
}

func isInterval(fs []field) bool {
	return len(fs) == 2 && fs[0].key == "lo" && fs[1].key == "hi"
}

// percentKey: the column is a rate, share or difference of rates.
func percentKey(key string) bool {
	k := key[strings.LastIndexByte(key, '.')+1:]
	return strings.HasSuffix(k, "rate") || strings.HasSuffix(k, "share") || k == "difference" ||
		strings.HasSuffix(k, "_ci") || k == "ci" || strings.HasPrefix(k, "difference")
}

// cell formats one value: rates and intervals of them as percentages,
// p-values with three significant digits, lists joined.
func cell(key string, raw json.RawMessage) anCell {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return anCell{Text: "–", null: true}
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		c := anCell{num: &f}
		switch {
		case percentKey(key):
			c.Text = fmt.Sprintf("%.1f%%", 100*f)
		case strings.HasSuffix(key, "p_value"):
			c.Text = strconv.FormatFloat(f, 'g', 3, 64)
		case strings.Contains(x.String(), "."):
			c.Text = strconv.FormatFloat(f, 'f', 3, 64)
		default:
			c.Text = x.String()
		}
		return c
	case bool:
		f := float64(boolInt(x))
		t := "no"
		if x {
			t = "yes"
		}
		return anCell{Text: t, num: &f}
	case string:
		return anCell{Text: x}
	case map[string]any: // an interval
		lo, _ := x["lo"].(json.Number).Float64()
		hi, _ := x["hi"].(json.Number).Float64()
		if percentKey(key) {
			return anCell{Text: fmt.Sprintf("[%.1f%%, %.1f%%]", 100*lo, 100*hi), num: &lo}
		}
		return anCell{Text: fmt.Sprintf("[%.3g, %.3g]", lo, hi), num: &lo}
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return anCell{Text: strings.Join(parts, ", ")}
	}
	return anCell{Text: string(raw)}
}

// Num reports whether the cell holds a number (right-aligned).
func (c anCell) Num() bool { return c.num != nil && !c.null }
