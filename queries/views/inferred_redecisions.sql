-- Inferred re-decisions: one row per point where a plan-less session (no
-- row in planned_sessions) changed course, estimated from its real tool
-- calls alone (control calls such as complete_task excluded), in seq order.
-- An ESTIMATE, never a counted replan: it does not enter replan_rate or
-- avg_replans. docs/inferred-replans.md gives the rule and its measured
-- precision and recall.
--
-- The rule is include/inferred_rule.sql, shared with session_facts_pending
-- (which stores the count per session).
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
WITH calls AS (
    SELECT c.session, c.source, c.event_id, c.seq, c.time, c.tool, c.ok,
           coalesce(c.error_kind, '')   AS error_kind,
           row_number() OVER w - 1      AS position,
           lag(c.tool) OVER w           AS prev_tool,
           lag(c.ok) OVER w             AS prev_ok
    FROM tool_calls c ANTI JOIN planned_sessions p USING (session)
    WHERE NOT c.control
    WINDOW w AS (PARTITION BY c.session ORDER BY c.seq, c.event_id)
),
-- @include include/inferred_rule.sql
, kinds AS (
    -- The error kinds of each re-decision's streak: the failures calls
    -- right before it.
    SELECT f.session, f.position,
           list(c.error_kind ORDER BY c.position) AS error_kinds
    FROM found f JOIN calls c
      ON c.session = f.session AND c.position BETWEEN f.position - f.failures AND f.position - 1
    GROUP BY f.session, f.position
)
SELECT f.session, f.source, f.position, f.event_id, f.seq, f.time, f.failures,
       f.from_tool, f.to_tool, k.error_kinds, f.rule,
       format('after {} failed call{} of {} [{}], call {} switched to {}',
              f.failures, CASE WHEN f.failures = 1 THEN '' ELSE 's' END, f.from_tool,
              array_to_string(k.error_kinds, ','), f.position, f.to_tool) AS evidence
FROM found f JOIN kinds k USING (session, position);
