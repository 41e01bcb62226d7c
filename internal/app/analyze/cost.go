package analyze

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/evosignal/evosignal/internal/metrics"
	"github.com/evosignal/evosignal/internal/render"
)

const costSummary = "cost per outcome, plan segment and after a failed hinted call: model calls, tokens, tool calls, time"

// runCost is `analyze cost`.
func runCost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "cost", costSummary+`.

Costs come from agent.model.called events (model calls with their input,
output and cached tokens and time; contract v1.3) and the real tool calls
(control calls excluded), over ended sessions. -view picks the table:

  outcomes       per outcome class: first_try_success (no update_task_plan
                 call), success_after_replans, failure (any other known
                 outcome; 'unknown' is left out). Per session: model calls,
                 tokens (input + output), real tool calls and time, each as a
                 sum and a mean with its 95% interval (Student's t).
  segments       per plan segment: no_replan (a session without replans),
                 before_first_replan, between_replans, after_last_replan.
                 Sums, and per session with the segment.
  after-failure  per hint and next step after a failed hinted call: replan,
                 retry (the same tool), switch (another tool) or stop (the
                 session ended). How often a successful call followed
                 (recovered, Wilson interval), and what getting there cost
                 (model calls, tokens, calls, time; means with intervals).
                 Is replanning after a failure cheaper than retrying, and for
                 which hints: compare the replan and retry rows of a hint.

Tokens are NULL (blank) where no model call reported any; docs/analyze.md
defines every figure and links its .sql file.`, stderr)
	view := fs.String("view", metrics.CostOutcomes, "the table: "+strings.Join(metrics.CostViews, ", "))
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error {
		if !slices.Contains(metrics.CostViews, *view) {
			return fmt.Errorf("-view %q: want one of %s", *view, strings.Join(metrics.CostViews, ", "))
		}
		return nil
	})
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	var rows any
	switch *view {
	case metrics.CostOutcomes:
		rows, err = metrics.CostByOutcome(ctx, src, c.filter)
	case metrics.CostSegments:
		rows, err = metrics.CostBySegment(ctx, src, c.filter)
	default:
		rows, err = metrics.CostAfterFailure(ctx, src, c.filter)
	}
	if err != nil {
		return fmt.Errorf("cost: %w", err)
	}
	filter := c.filterJSON()
	filter["view"] = *view
	return render.Write(stdout, c.format, &render.Envelope{
		Analysis:    "cost",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Rows:        rows,
	})
}

const stuckSummary = "stuck states (loops, plan churn, depth limits, soft cap, pending at the end), examples, triggers that work"

// Stuck views (analyze stuck -view).
const (
	stuckStates   = "states"
	stuckExamples = "examples"
	stuckTriggers = "triggers"
)

var stuckViews = []string{stuckStates, stuckExamples, stuckTriggers}

// runStuck is `analyze stuck`.
func runStuck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags(ctx, "stuck", stuckSummary+`.

Over ended sessions. -view picks the table:

  states    one row per state (and group), every state: the sessions in it
            and their rate (Wilson interval), its occurrences, what preceded
            it most often (a tool and hint, or a replan trigger), and how
            many stuck sessions still succeeded (recovered).
              loop            a failed real call right after a failed call of
                              the same tool with the same arguments or the
                              same error (SkillLite's "LOOP DETECTED" read
                              as one); once per streak
              churn           a replan with no real tool call since the plan
                              before it
              depth_limit     agent.depth_limit.reached
              soft_cap        a replan at or past the soft cap
              pending_at_end  the session ended with a task neither
                              completed nor closed
  examples  up to -examples sessions per state, the latest first, with the
            first occurrence's seq and detail
  triggers  per visible replan trigger (failed_hinted_call, depth_limit,
            no_tool_call, user, none_visible; read from the events before
            each replan): the replans, the sessions with one and the rate at
            which they then succeeded

queries/analyze/stuck_states.sql defines every state; docs/analyze.md the
figures.`, stderr)
	view := fs.String("view", stuckStates, "the table: "+strings.Join(stuckViews, ", "))
	examples := fs.Int64("examples", 5, "-view examples: sessions per state")
	src, closeDB, err := c.start(ctx, fs, args, stdout, func() error {
		if !slices.Contains(stuckViews, *view) {
			return fmt.Errorf("-view %q: want one of %s", *view, strings.Join(stuckViews, ", "))
		}
		if *examples < 1 {
			return fmt.Errorf("-examples %d: want at least 1", *examples)
		}
		return nil
	})
	if err != nil || src == nil {
		return err
	}
	defer closeDB()
	var rows any
	switch *view {
	case stuckStates:
		rows, err = metrics.Stuck(ctx, src, c.filter)
	case stuckExamples:
		rows, err = metrics.StuckExamples(ctx, src, c.filter, *examples)
	default:
		rows, err = metrics.ReplanTriggers(ctx, src, c.filter)
	}
	if err != nil {
		return fmt.Errorf("stuck: %w", err)
	}
	filter := c.filterJSON()
	filter["view"] = *view
	if *view == stuckExamples {
		filter["examples"] = *examples
	}
	return render.Write(stdout, c.format, &render.Envelope{
		Analysis:    "stuck",
		GeneratedAt: c.now().UTC(),
		Filter:      filter,
		Rows:        rows,
	})
}
