// Package report assembles the nightly evolution report of `analyze report`:
// one window of sessions set against the window of the same length before
// it, with the evolution curve, the worst tool hints, the task-type → tool
// map, new and retired rules, rule effects, what sessions cost and where
// agents get stuck, and data quality. Every number
// comes from an analyzer of internal/metrics (and the dead-letter count from
// queries/report/dead_letters.sql); the report only selects, compares and lays them out —
// as JSON (the stable shape), Markdown and one self-contained HTML page.
package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// ShapeVersion is the version of the report's JSON shape. It changes only
// with a breaking change of a documented field.
const ShapeVersion = 1

// Config selects the sessions a report covers and how each section is
// computed. DefaultConfig holds the documented defaults; the window and the
// taxonomy have none.
type Config struct {
	// Since and Until bound the current window [Since, Until) (sessions by
	// their start). The previous window is the one of the same length
	// right before it.
	Since, Until time.Time
	// Agent, Model, TaskType narrow every section (empty: all).
	Agent, Model, TaskType string

	// Every is the trend period (metrics.EveryDay or EveryWeek) and Periods
	// how many of them the curve shows, the last one holding Until.
	Every   string
	Periods int

	// Taxonomy classifies tasks for hints, mappings and rules; nil: the
	// default taxonomy.
	Taxonomy *taxonomy.Taxonomy
	// Hints sets the support a hint needs to be ranked; WorstHints is how
	// many of the worst are listed.
	Hints      metrics.HintsConfig
	WorstHints int
	// MappingWindows windows of the current window's length (ending at
	// Until) decide whether a task type's top tool is stable, with
	// StableShare of each window's calls.
	MappingWindows int
	StableShare    float64

	// Rules are the thresholds rules are learned with. The current set is
	// learned from the sessions started in [RulesSince, Until), the
	// previous one from [RulesSince, Since); zero RulesSince: from the
	// first session.
	Rules      metrics.RulesConfig
	RulesSince time.Time

	// Effect judges rule effects over the sessions started in
	// [EffectSince, Until); zero EffectSince: the current window.
	Effect      metrics.EffectConfig
	EffectSince time.Time
}

// DefaultConfig returns the defaults: a daily curve over 14 days, the 10
// worst hints, stability over 4 windows with a share of 0.5, and the
// analyzers' default thresholds. Since and Until must be set.
func DefaultConfig() Config {
	return Config{
		Every:          metrics.EveryDay,
		Periods:        14,
		Hints:          metrics.DefaultHintsConfig(),
		WorstHints:     10,
		MappingWindows: 4,
		StableShare:    0.5,
		Rules:          metrics.DefaultRulesConfig(),
		Effect:         metrics.DefaultEffectConfig(),
	}
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Since.IsZero() || c.Until.IsZero() {
		errs = append(errs, errors.New("the window needs both since and until"))
	} else if !c.Since.Before(c.Until) {
		errs = append(errs, fmt.Errorf("since %s is not before until %s", c.Since.Format(time.RFC3339), c.Until.Format(time.RFC3339)))
	}
	if c.Every != metrics.EveryDay && c.Every != metrics.EveryWeek {
		errs = append(errs, fmt.Errorf("trend period %q: want %s or %s", c.Every, metrics.EveryDay, metrics.EveryWeek))
	}
	if c.Periods < 1 || c.Periods > 366 {
		errs = append(errs, fmt.Errorf("periods %d: want 1 to 366", c.Periods))
	}
	if c.WorstHints < 1 {
		errs = append(errs, fmt.Errorf("worst hints %d: want at least 1", c.WorstHints))
	}
	if c.MappingWindows < 1 {
		errs = append(errs, fmt.Errorf("mapping windows %d: want at least 1", c.MappingWindows))
	}
	if !c.RulesSince.IsZero() && !c.Since.IsZero() && !c.RulesSince.Before(c.Since) {
		errs = append(errs, fmt.Errorf("rules since %s must be before the window's start %s (the previous rule set is learned up to it)",
			c.RulesSince.Format(time.RFC3339), c.Since.Format(time.RFC3339)))
	}
	if !c.EffectSince.IsZero() && !c.Until.IsZero() && !c.EffectSince.Before(c.Until) {
		errs = append(errs, fmt.Errorf("effect since %s is not before until %s", c.EffectSince.Format(time.RFC3339), c.Until.Format(time.RFC3339)))
	}
	errs = append(errs, c.Hints.Validate(), c.Rules.Validate(), c.Effect.Validate(),
		metrics.MappingsConfig{StableShare: c.StableShare, Windows: c.MappingWindows, Window: c.Until.Sub(c.Since)}.Validate())
	return errors.Join(errs...)
}

// Report is the whole report; its JSON is the stable shape
// (docs/analyze.md, "analyze report").
type Report struct {
	Report      string    `json:"report"`  // "evosignal"
	Version     int       `json:"version"` // ShapeVersion
	GeneratedAt time.Time `json:"generated_at"`
	Window      Window    `json:"window"`
	Filter      Filter    `json:"filter"`
	Settings    Settings  `json:"settings"`
	Classifier  string    `json:"classifier"` // the taxonomy, name@version+hash

	Headline   Headline             `json:"headline"`
	Trend      []metrics.TrendRow   `json:"trend"`
	WorstHints []metrics.HintRow    `json:"worst_hints"`
	Mappings   []metrics.MappingRow `json:"mappings"`
	Rules      Rules                `json:"rules"`
	Effects    []metrics.EffectRow  `json:"effects"`
	// RandomisedEffects are the rule sets' randomised effects (rules arm
	// against holdout arm), over the same sessions as Effects.
	RandomisedEffects []metrics.RandomisedRow `json:"randomised_effects"`
	Cost              Cost                    `json:"cost"`
	Stuck             Stuck                   `json:"stuck"`
	Inferred          Inferred                `json:"inferred"` // an estimate, apart from the replans above
	DataQuality       DataQuality             `json:"data_quality"`
}

// Window is the current window and the previous one of the same length.
type Window struct {
	Since         time.Time `json:"since"`
	Until         time.Time `json:"until"`
	Length        string    `json:"length"` // e.g. 24h, 7d
	PreviousSince time.Time `json:"previous_since"`
	PreviousUntil time.Time `json:"previous_until"`
}

// Filter narrows every section; empty fields are omitted.
type Filter struct {
	Agent    string `json:"agent,omitempty"`
	Model    string `json:"model,omitempty"`
	TaskType string `json:"task_type,omitempty"`
}

// Settings records how each section was computed.
type Settings struct {
	Every          string              `json:"every"`
	Periods        int                 `json:"periods"`
	TrendSince     time.Time           `json:"trend_since"`
	MinCalls       int64               `json:"min_calls"`
	WorstHints     int                 `json:"worst_hints"`
	MappingWindows int                 `json:"mapping_windows"`
	StableShare    float64             `json:"stable_share"`
	MappingSince   time.Time           `json:"mapping_since"`
	Thresholds     metrics.RulesConfig `json:"thresholds"`
	RulesSince     *time.Time          `json:"rules_since"` // null: from the first session
	EffectSince    time.Time           `json:"effect_since"`
	MinSessions    int64               `json:"min_sessions"`
	NilMargin      float64             `json:"nil_margin"`
	Metric         string              `json:"metric"`
}

// Build runs the analyzers over src and assembles the report, stamped
// generatedAt.
func Build(ctx context.Context, src metrics.Source, cfg Config, generatedAt time.Time) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Taxonomy == nil {
		cfg.Taxonomy = taxonomy.Default()
	}
	length := cfg.Until.Sub(cfg.Since)
	r := newReport(cfg, generatedAt)
	cur, prev := cfg.filter(cfg.Since, cfg.Until), cfg.filter(r.Window.PreviousSince, r.Window.PreviousUntil)
	now, before, err := r.headlineAndTrend(ctx, src, cfg)
	if err != nil {
		return nil, err
	}
	r.Inferred = newInferred(now.Rows[0], before.Rows[0])
	if r.WorstHints, err = worstHints(ctx, src, cfg, cur); err != nil {
		return nil, err
	}
	mcfg := metrics.MappingsConfig{StableShare: cfg.StableShare, Windows: cfg.MappingWindows, Window: length}
	maps, err := metrics.Mappings(ctx, src, cfg.filter(r.Settings.MappingSince, cfg.Until), cfg.Taxonomy, mcfg)
	if err != nil {
		return nil, fmt.Errorf("mappings: %w", err)
	}
	r.Mappings = maps.Rows
	if r.Mappings == nil {
		r.Mappings = []metrics.MappingRow{}
	}
	effects, err := metrics.Effect(ctx, src, cfg.filter(r.Settings.EffectSince, cfg.Until), cfg.Effect)
	if err != nil {
		return nil, fmt.Errorf("effect: %w", err)
	}
	r.Effects = effects.Rows
	if r.RandomisedEffects, err = metrics.Randomised(ctx, src, cfg.filter(r.Settings.EffectSince, cfg.Until), cfg.Effect.Metric); err != nil {
		return nil, fmt.Errorf("randomised effect: %w", err)
	}
	if r.Rules, err = ruleChanges(ctx, src, cfg, effects.Rows, generatedAt); err != nil {
		return nil, err
	}
	if r.Cost, err = costSection(ctx, src, cur, prev, cfg.filter(r.Settings.TrendSince, cfg.Until)); err != nil {
		return nil, err
	}
	if r.Stuck, err = stuckSection(ctx, src, cur, prev); err != nil {
		return nil, err
	}
	if r.DataQuality, err = dataQuality(ctx, src, cfg, now, effects.Notes); err != nil {
		return nil, err
	}
	return r, nil
}

// newReport is the report's frame: its identity, window, filter and
// settings, before any analyzer ran.
func newReport(cfg Config, generatedAt time.Time) *Report {
	length := cfg.Until.Sub(cfg.Since)
	r := &Report{
		Report:      "evosignal",
		Version:     ShapeVersion,
		GeneratedAt: generatedAt.UTC(),
		Window: Window{
			Since:         cfg.Since.UTC(),
			Until:         cfg.Until.UTC(),
			Length:        formatLength(length),
			PreviousSince: cfg.Since.Add(-length).UTC(),
			PreviousUntil: cfg.Since.UTC(),
		},
		Filter:     Filter{Agent: cfg.Agent, Model: cfg.Model, TaskType: cfg.TaskType},
		Classifier: cfg.Taxonomy.ID(),
	}
	r.Settings = Settings{
		Every:          cfg.Every,
		Periods:        cfg.Periods,
		TrendSince:     trendSince(cfg.Until, cfg.Every, cfg.Periods),
		MinCalls:       cfg.Hints.MinCalls,
		WorstHints:     cfg.WorstHints,
		MappingWindows: cfg.MappingWindows,
		StableShare:    cfg.StableShare,
		MappingSince:   cfg.Until.Add(-time.Duration(cfg.MappingWindows) * length).UTC(),
		Thresholds:     cfg.Rules,
		EffectSince:    cfg.Since.UTC(),
		MinSessions:    cfg.Effect.MinSessions,
		NilMargin:      cfg.Effect.NilMargin,
		Metric:         cfg.Effect.Metric,
	}
	if !cfg.RulesSince.IsZero() {
		s := cfg.RulesSince.UTC()
		r.Settings.RulesSince = &s
	}
	if !cfg.EffectSince.IsZero() {
		r.Settings.EffectSince = cfg.EffectSince.UTC()
	}

	return r
}

// rangeStart is the first period of the curve with an ended session, if it
// ends at or before since (so that it does not overlap the window); nil
// otherwise.
func rangeStart(trend []metrics.TrendRow, every string, since time.Time) *metrics.TrendRow {
	for i, t := range trend {
		if t.Sessions == 0 {
			continue
		}
		start, err := time.Parse(time.DateOnly, t.Period)
		if err != nil {
			return nil
		}
		end := start.AddDate(0, 0, 1)
		if every == metrics.EveryWeek {
			end = start.AddDate(0, 0, 7)
		}
		if end.After(since) {
			return nil
		}
		return &trend[i]
	}
	return nil
}

// filter is the analyzers' filter for sessions started in [since, until).
func (c Config) filter(since, until time.Time) metrics.Filter {
	return metrics.Filter{Since: since, Until: until, Agent: c.Agent, Model: c.Model, TaskType: c.TaskType}
}

// trendSince is the start of the first of periods whole periods (UTC days,
// or ISO weeks from Monday) whose last holds the instant before until.
func trendSince(until time.Time, every string, periods int) time.Time {
	last := until.Add(-time.Nanosecond).UTC()
	start := time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, time.UTC)
	step := 1
	if every == metrics.EveryWeek {
		step = 7
		start = start.AddDate(0, 0, -((int(start.Weekday()) + 6) % 7))
	}
	return start.AddDate(0, 0, -(periods-1)*step)
}

// formatLength writes a window length as the flags take it: 7d, 24h, 90m.
func formatLength(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d > day && d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
