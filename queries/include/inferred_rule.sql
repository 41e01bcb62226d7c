-- The rule that infers re-decisions in plan-less sessions, as the CTEs rule,
-- runs, streaks, candidates and found. Not a statement:
-- views/inferred_redecisions.sql and views/session_facts_pending.sql include
-- it where they say "@include include/inferred_rule.sql", right after a CTE
-- named calls and its comma. calls holds the real tool calls (control calls
-- excluded) of the sessions without a plan, one row per call, with the
-- columns session, source, event_id, seq, time, tool, ok, error_kind,
-- position (0-based within the session, in (seq, event_id) order),
-- prev_tool and prev_ok (the call before, lag over that order).
--
-- A re-decision is inferred at a call when the calls just before it are a
-- streak of at least min_failures failed calls of one tool, and the call is
-- of another tool; at most cap per session, the first ones. This is
-- inferbench.ChosenRule (every tool its own family), the rule
-- cmd/inferbench measures; a test in internal/store checks that the view and
-- that rule give the same rows, and that rule names the parameters below.
rule AS (
    SELECT 1 AS min_failures, 3 AS cap, 'k=1 tool cap=3' AS name
), runs AS (
    -- A run: a failed call and the failed calls of the same tool right
    -- after it. An ok call is a run of its own.
    SELECT *,
           sum(CASE WHEN ok OR prev_ok IS NULL OR prev_ok OR prev_tool <> tool THEN 1 ELSE 0 END)
               OVER (PARTITION BY session ORDER BY position ROWS UNBOUNDED PRECEDING) AS run
    FROM calls
), streaks AS (
    -- At a failed call: the length of its run so far.
    SELECT *,
           CASE WHEN NOT ok THEN row_number() OVER r ELSE 0 END AS streak
    FROM runs
    WINDOW r AS (PARTITION BY session, run ORDER BY position ROWS UNBOUNDED PRECEDING)
), candidates AS (
    SELECT *, lag(streak) OVER w AS failures
    FROM streaks
    WINDOW w AS (PARTITION BY session ORDER BY position)
), found AS (
    SELECT c.session, c.source, c.position, c.event_id, c.seq, c.time, c.failures,
           c.prev_tool AS from_tool, c.tool AS to_tool, rule.name AS rule
    FROM candidates c, rule
    WHERE c.failures >= rule.min_failures AND c.tool <> c.prev_tool
    QUALIFY row_number() OVER (PARTITION BY c.session ORDER BY c.position) <= rule.cap
)
