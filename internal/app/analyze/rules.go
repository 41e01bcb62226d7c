package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/evosignal/evosignal/agent/rules"
	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/bus"
	"github.com/evosignal/evosignal/internal/cli"
	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

const rulesSummary = "learned hint rules (prefer, avoid, replace) with their evidence; -publish to NATS"

// rulesFlags are the flags of analyze rules besides the common ones.
type rulesFlags struct {
	cfg     metrics.RulesConfig
	holdout float64
	// ruleHoldout is each rule's own holdout share (-rule-holdout).
	ruleHoldout float64
	guard       string // the metric the publish guard judges on; "" or "off": none
	out         string
	skillLite   bool
	workspace   string
	publish     bool
	bucket      bus.RulesBucketConfig
	natsURL     string
}

// runRules is `analyze rules`.
func runRules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "rules", rulesSummary+`.

Learns hint rules per task type from real tool calls and replans:
  prefer  T, X: X's calls in T succeed (Wilson lower bound ≥ -prefer-success),
          X has at least -prefer-share of T's calls, and -min-calls calls;
  avoid   T, H: the lower bound of H's failure rate in T is above T's
          baseline (the failure rate of T's calls under every other hint),
          the lift is at least -avoid-lift and p < -alpha, with -min-calls;
  replace T, A → B: at least -min-replans valid replans dropped a pending
          task hinted A and added one hinted B of type T, and B's tasks
          succeeded (Wilson lower bound ≥ -replace-success).
Writes the rule set to stdout as a table on a terminal and as JSON
otherwise (-format; table, csv and ndjson list the rules), or as JSON to -out; -skilllite writes SkillLite's planning
rules instead (hints it knows, priority 50-79, at most 50 rules), and
-workspace DIR writes them where SkillLite reads a workspace's rules,
DIR/.skilllite/planning_rules.json (see docs/bridge-skilllite.md); with a
holdout, the workspace (by its absolute path) is the unit assigned: in the
holdout arm no rule is written, and DIR/.skilllite/evosignal_assignment.json
records the arm for the bridge to report (bridge -workspace DIR). -publish puts the rule set learned from all agents under
the key "global" and each agent's own under its name into the key-value
bucket -bucket on -nats (with -agent, only that agent's key).
Each rule set with rules holds out -holdout of the sessions as a randomised
control: an agent assigns each session to an arm from the rule set's version
and the session id, applies no rule in the holdout arm and reports the arm
(schema/README.md, "Randomised holdouts"); 0 turns the holdout off.
-rule-holdout gives every rule a holdout of its own as well: within the
rules arm each rule is held out of a session with that share, drawn
independently per rule, so that each rule's effect alone is randomised too.
Before -publish writes a key, the guard reads the randomised effects (over
the sessions -since/-until select) on -guard: when that of the set the key
holds (its rules arm against its holdout arm) is harmful with confidence,
the key gets the last good set of its history instead of the learned one,
with a rolled_back record of the evidence; a rule whose own effect is
harmful is retired: left out of the set, and listed in its retired record,
which every later set of the key carries on ("off" skips the guard).`, stderr)
	f := rulesFlags{cfg: metrics.DefaultRulesConfig(), bucket: bus.DefaultRulesBucket()}
	fs.Int64Var(&f.cfg.MinCalls, "min-calls", f.cfg.MinCalls, "calls of a hint in a task type that prefer and avoid need")
	ruleFlags(fs, &f.cfg, "")
	c.withTaxonomy(fs)
	fs.Float64Var(&f.holdout, "holdout", metrics.DefaultHoldout, "share of sessions held out as a randomised control, 0 to 0.5")
	fs.Float64Var(&f.ruleHoldout, "rule-holdout", 0, "share of the rules arm's sessions each rule is held out of on its own, 0 to 0.5 (needs -holdout > 0; 0: none)")
	fs.StringVar(&f.guard, "guard", metrics.EffectOnSuccess, "-publish: the metric the rollback guard judges the set in force on ("+strings.Join(metrics.EffectMetrics, ", ")+"), or off")
	fs.StringVar(&f.out, "out", "", "write to this `file` instead of stdout")
	fs.BoolVar(&f.skillLite, "skilllite", false, "write SkillLite's planning rules (an array of PlanningRule)")
	fs.StringVar(&f.workspace, "workspace", "", "write SkillLite's planning rules into the SkillLite workspace `dir` (implies -skilllite; excludes -out)")
	fs.BoolVar(&f.publish, "publish", false, "put the rule sets into the NATS key-value bucket (needs -nats)")
	fs.StringVar(&f.natsURL, "nats", cli.URLFromEnv(), "NATS server `URL`(s), comma-separated, for -publish (default $NATS_URL)")
	fs.StringVar(&f.bucket.Bucket, "bucket", f.bucket.Bucket, "key-value bucket for -publish")
	fs.IntVar(&f.bucket.History, "history", f.bucket.History, "versions the bucket keeps per key")
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error { return f.check(c, fs) })
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	now := c.now()
	rs, err := metrics.LearnRules(ctx, src, c.filter, c.tax, f.cfg, now)
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	var byAgent map[string]*ruleset.RuleSet
	if f.publish && c.filter.Agent == "" {
		if byAgent, err = metrics.LearnRulesByAgent(ctx, src, c.filter, c.tax, f.cfg, now); err != nil {
			return fmt.Errorf("rules per agent: %w", err)
		}
	}
	metrics.SetHoldout(f.holdout, rs)
	metrics.SetRuleHoldout(f.ruleHoldout, rs)
	for _, set := range byAgent {
		metrics.SetHoldout(f.holdout, set)
		metrics.SetRuleHoldout(f.ruleHoldout, set)
	}
	if f.workspace != "" {
		// SkillLite reads one rule set per workspace: the workspace is
		// the unit of the holdout (skilllite.DrawWorkspace).
		id, err := filepath.Abs(f.workspace)
		if err != nil {
			return fmt.Errorf("-workspace: %w", err)
		}
		applied, wa := skilllite.DrawWorkspace(*rs, id, c.tax)
		if err := writeRules(c, f, c.tax, &applied, stdout); err != nil {
			return err
		}
		if err := skilllite.WriteAssignment(f.workspace, wa); err != nil {
			return err
		}
		if wa != nil {
			fmt.Fprintf(stderr, "analyze: workspace %s is in the %s arm of %s (holdout %v); recorded in %s for the bridge (-workspace)\n",
				id, wa.Assignment.Arm, rs.Version, rs.Holdout, skilllite.AssignmentFile(f.workspace))
		}
	} else if err := writeRules(c, f, c.tax, rs, stdout); err != nil {
		return err
	}
	if set := skilllite.Rules(rs, c.tax); f.skillLite && len(set.Unknown)+len(set.OverCap) > 0 {
		fmt.Fprintf(stderr, "analyze: left out of SkillLite's rules: %d whose hint SkillLite does not know %v, %d past its cap of %d %v\n",
			len(set.Unknown), set.Unknown, len(set.OverCap), skilllite.MaxRules, set.OverCap)
	}
	if !f.publish {
		return nil
	}
	global := rs
	if c.filter.Agent != "" {
		global, byAgent = nil, map[string]*ruleset.RuleSet{c.filter.Agent: rs}
	}
	var effects []metrics.RandomisedRow
	if f.guard != "off" {
		if effects, err = metrics.Randomised(ctx, src, metrics.Filter{Since: c.filter.Since, Until: c.filter.Until}, f.guard); err != nil {
			return fmt.Errorf("rules: the guard's randomised effects: %w", err)
		}
	}
	return publishRules(ctx, f, c.conn, global, byAgent, effects, now, stderr)
}

// check checks the flags of analyze rules once they are parsed, reporting
// every problem at once. -workspace sets -skilllite and -out; without
// -format, a file and SkillLite's rules are written as JSON.
func (f *rulesFlags) check(c *common, fs *flag.FlagSet) error {
	var errs []error
	if f.guard != "off" && !slices.Contains(metrics.EffectMetrics, f.guard) {
		errs = append(errs, fmt.Errorf("-guard %q: want one of %s, or off", f.guard, strings.Join(metrics.EffectMetrics, ", ")))
	}
	if !(f.holdout >= 0 && f.holdout <= ruleset.MaxHoldout) {
		errs = append(errs, fmt.Errorf("-holdout %v: want a share in [0, %v]", f.holdout, ruleset.MaxHoldout))
	}
	switch {
	case !(f.ruleHoldout >= 0 && f.ruleHoldout <= ruleset.MaxHoldout):
		errs = append(errs, fmt.Errorf("-rule-holdout %v: want a share in [0, %v]", f.ruleHoldout, ruleset.MaxHoldout))
	case f.ruleHoldout > 0 && f.holdout == 0:
		errs = append(errs, errors.New("-rule-holdout needs -holdout > 0: a rule's own arm is drawn within the set's rules arm"))
	}
	if len(c.filter.By) > 0 {
		errs = append(errs, fmt.Errorf("-by %v: rules are learned per task type (use -agent for one agent's rules)", c.filter.By))
	}
	if f.workspace != "" {
		if f.out != "" {
			errs = append(errs, errors.New("-workspace and -out exclude each other"))
		}
		f.skillLite, f.out = true, skilllite.WorkspaceRulesFile(f.workspace)
		if err := os.MkdirAll(filepath.Dir(f.out), 0o755); err != nil {
			errs = append(errs, fmt.Errorf("-workspace: %w", err))
		}
	}
	formatGiven := false
	fs.Visit(func(fl *flag.Flag) { formatGiven = formatGiven || fl.Name == "format" })
	if !formatGiven && (f.out != "" || f.skillLite) {
		c.format = "json" // a file is read by programs: the rule set itself
	}
	if f.skillLite && f.publish {
		errs = append(errs, errors.New("-skilllite and -publish exclude each other: agents watching the bucket load the evosignal rule set"))
	}
	if f.skillLite && c.format != "json" {
		errs = append(errs, fmt.Errorf("-skilllite writes JSON, not %s", c.format))
	}
	if f.publish {
		if f.natsURL == "" {
			errs = append(errs, errors.New("-publish needs -nats"))
		}
		errs = append(errs, f.bucket.Validate())
	}
	errs = append(errs, f.cfg.Validate())
	return errors.Join(errs...)
}

// ruleFlags binds the thresholds of the rules learned (all but -min-calls,
// which commands bind in their own words), each help text after prefix.
func ruleFlags(fs *flag.FlagSet, cfg *metrics.RulesConfig, prefix string) {
	fs.Float64Var(&cfg.PreferSuccess, "prefer-success", cfg.PreferSuccess, prefix+"lower bound of the success rate prefer needs")
	fs.Float64Var(&cfg.PreferShare, "prefer-share", cfg.PreferShare, prefix+"share of the type's calls prefer needs")
	fs.Float64Var(&cfg.AvoidLift, "avoid-lift", cfg.AvoidLift, prefix+"lift over the type's baseline failure rate avoid needs")
	fs.Float64Var(&cfg.Alpha, "alpha", cfg.Alpha, prefix+"p-value avoid must be below")
	fs.Int64Var(&cfg.MinReplans, "min-replans", cfg.MinReplans, prefix+"replans showing the swap replace needs")
	fs.Float64Var(&cfg.ReplaceSuccess, "replace-success", cfg.ReplaceSuccess, prefix+"lower bound of the added tasks' success rate replace needs")
}

// ruleLine is one rule in table and CSV output.
type ruleLine struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	TaskType    string  `json:"task_type"`
	ToolHint    string  `json:"tool_hint"`
	Instead     string  `json:"instead"`
	Support     int64   `json:"support"`
	Confidence  float64 `json:"confidence"`
	Instruction string  `json:"instruction"`
}

// writeRules writes rs to -out or stdout in the chosen format.
func writeRules(c *common, f rulesFlags, tax *taxonomy.Taxonomy, rs *ruleset.RuleSet, stdout io.Writer) error {
	write := func(w io.Writer) error {
		if c.format == "json" {
			return encodeRules(w, f.skillLite, tax, rs, "  ")
		}
		lines := make([]ruleLine, len(rs.Rules))
		for i, r := range rs.Rules {
			lines[i] = ruleLine{r.ID, string(r.Kind), r.TaskType, r.ToolHint, r.Instead, r.Support, r.Confidence, r.Instruction}
		}
		filter := c.filterJSON()
		filter["thresholds"] = rs.Thresholds
		return render.Write(w, c.format, &render.Envelope{
			Analysis:    "rules",
			GeneratedAt: rs.GeneratedAt,
			Filter:      filter,
			Classifier:  rs.Classifier,
			Rows:        lines,
		})
	}
	if f.out == "" {
		return write(stdout)
	}
	// Write beside the target and rename, so that a reader (an agent
	// loading the file) never sees half a rule set.
	tmp, err := os.CreateTemp(filepath.Dir(f.out), "."+filepath.Base(f.out)+".*")
	if err != nil {
		return fmt.Errorf("write rules: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write rules to %s: %w", f.out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write rules to %s: %w", f.out, err)
	}
	if err := os.Rename(tmp.Name(), f.out); err != nil {
		return fmt.Errorf("write rules: %w", err)
	}
	return nil
}

// encodeRules writes rs as the project's rule set, or as SkillLite's
// rules.json.
func encodeRules(w io.Writer, skillLite bool, tax *taxonomy.Taxonomy, rs *ruleset.RuleSet, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	if skillLite {
		return enc.Encode(skilllite.Rules(rs, tax).Rules)
	}
	return enc.Encode(rs)
}

// publishRules puts the rule sets into the bucket (rules.Publish) and says
// what it did with each key.
func publishRules(ctx context.Context, f rulesFlags, conn bus.ConnConfig, global *ruleset.RuleSet, byAgent map[string]*ruleset.RuleSet,
	effects []metrics.RandomisedRow, now time.Time, stderr io.Writer) error {
	conn.URL, conn.Name = f.natsURL, "evosignal analyze rules"
	nc, err := bus.Connect(conn, nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	kv, err := bus.EnsureRulesBucket(ctx, js, f.bucket)
	if err != nil {
		return err
	}
	if f.guard != "off" {
		sets := map[string]*ruleset.RuleSet{}
		maps.Copy(sets, byAgent)
		if global != nil {
			sets[ruleset.GlobalKey] = global
		}
		rolled, err := metrics.GuardKeys(effects, sets, func(key string) ([]ruleset.RuleSet, error) { return rules.History(ctx, kv, key) }, f.guard, now)
		if err != nil {
			return err
		}
		for _, x := range rolled {
			if x.RolledBack {
				r := x.Set.RolledBack
				fmt.Fprintf(stderr, "rules: %s/%s: %s's randomised effect on %s is harmful (%+.1f pts [%+.1f, %+.1f], %d / %d sessions): rolled back to %s instead of publishing %s\n",
					f.bucket.Bucket, x.Key, r.Version, r.Metric, 100*r.Effect, 100*r.Lo, 100*r.Hi, r.SessionsRules, r.SessionsHoldout, versionOrNone(x.Set.Version), x.Learned)
			}
			for _, r := range x.Retired {
				fmt.Fprintf(stderr, "rules: %s/%s: rule %s retired: its own randomised effect on %s in %s is harmful (%+.1f pts [%+.1f, %+.1f], %d applying / %d holding it out); publishing %s without it\n",
					f.bucket.Bucket, x.Key, r.Rule, r.Metric, r.Version, 100*r.Effect, 100*r.Lo, 100*r.Hi, r.SessionsRules, r.SessionsHoldout, versionOrNone(x.Set.Version))
			}
		}
		if global != nil {
			global = sets[ruleset.GlobalKey]
			delete(sets, ruleset.GlobalKey)
		}
		byAgent = sets
	}
	pubs, err := rules.Publish(ctx, kv, global, byAgent)
	for _, p := range pubs {
		where := f.bucket.Bucket + "/" + p.Key
		switch p.Action {
		case rules.Skipped:
			fmt.Fprintf(stderr, "rules: %s: no rules of its own, not written\n", where)
		case rules.Deleted:
			fmt.Fprintf(stderr, "rules: %s deleted: no rules of its own (agents fall back to %s)\n", where, ruleset.GlobalKey)
		case rules.Unchanged:
			fmt.Fprintf(stderr, "rules: %s unchanged (revision %d)\n", where, p.Revision)
		default:
			fmt.Fprintf(stderr, "rules: %s revision %d, %d rules (%s)\n", where, p.Revision, p.Rules, p.Version)
		}
	}
	return err
}

// versionOrNone is a rule set version, or "no rules" for an empty set.
func versionOrNone(v string) string {
	if v == "" {
		return "no rules"
	}
	return v
}
