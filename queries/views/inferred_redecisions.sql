-- Inferred re-decisions: one row per point where a plan-less session (no
-- row in planned_sessions) changed course, estimated from its real tool
-- calls alone (control calls such as complete_task excluded), in seq order.
-- An ESTIMATE, never a counted replan: it does not enter replan_rate or
-- avg_replans. docs/inferred-replans.md gives the rule and its measured
-- precision and recall.
--
-- The rule: a re-decision is inferred at a call when the calls just before
-- it are a streak of at least min_failures failed calls of one tool, and the
-- call is of another tool; at most cap per session, the first ones. This is
-- internal/infer's DefaultRule (every tool its own family), the rule
-- cmd/inferbench measures; a test in internal/store checks that this view
-- and that rule give the same rows, and that rule names the parameters below.
--
--   position     real tool calls of the session before this one (0-based):
--                the agent re-decided between calls position−1 and position
--   event_id, seq, time
--                the tool call that took the new course
--   failures     length of the failure streak before it
--   from_tool    the tool of the streak, given up
--   to_tool      the tool of this call, taken
--   error_kinds  the streak's error kinds, in order ('' where none reported)
--   rule         the rule and its parameters, as cmd/inferbench names it
--   evidence     the same in words
CREATE OR REPLACE VIEW inferred_redecisions AS
WITH rule AS (
    SELECT 1 AS min_failures, 3 AS cap, 'k=1 tool cap=3' AS name
), calls AS (
    SELECT c.session, c.source, c.event_id, c.seq, c.time, c.tool, c.ok,
           coalesce(c.error_kind, '')   AS error_kind,
           row_number() OVER w - 1      AS position,
           lag(c.tool) OVER w           AS prev_tool,
           lag(c.ok) OVER w             AS prev_ok
    FROM tool_calls c ANTI JOIN planned_sessions p USING (session)
    WHERE NOT c.control
    WINDOW w AS (PARTITION BY c.session ORDER BY c.seq, c.event_id)
), runs AS (
    -- A run: a failed call and the failed calls of the same tool right
    -- after it. An ok call is a run of its own.
    SELECT *,
           sum(CASE WHEN ok OR prev_ok IS NULL OR prev_ok OR prev_tool <> tool THEN 1 ELSE 0 END)
               OVER (PARTITION BY session ORDER BY position ROWS UNBOUNDED PRECEDING) AS run
    FROM calls
), streaks AS (
    -- At a failed call: the length and error kinds of its run so far.
    SELECT *,
           CASE WHEN NOT ok THEN row_number() OVER r ELSE 0 END AS streak,
           CASE WHEN NOT ok THEN list(error_kind) OVER r END    AS streak_kinds
    FROM runs
    WINDOW r AS (PARTITION BY session, run ORDER BY position ROWS UNBOUNDED PRECEDING)
), candidates AS (
    SELECT *,
           lag(streak) OVER w       AS failures,
           lag(streak_kinds) OVER w AS error_kinds
    FROM streaks
    WINDOW w AS (PARTITION BY session ORDER BY position)
), found AS (
    SELECT c.session, c.source, c.position, c.event_id, c.seq, c.time, c.failures,
           c.prev_tool AS from_tool, c.tool AS to_tool, c.error_kinds, rule.name AS rule
    FROM candidates c, rule
    WHERE c.failures >= rule.min_failures AND c.tool <> c.prev_tool
    QUALIFY row_number() OVER (PARTITION BY c.session ORDER BY c.position) <= rule.cap
)
SELECT *,
       format('after {} failed call{} of {} [{}], call {} switched to {}',
              failures, CASE WHEN failures = 1 THEN '' ELSE 's' END, from_tool,
              array_to_string(error_kinds, ','), position, to_tool) AS evidence
FROM found;
