-- The session-level signals, each defined here once: one row per session of
-- session_facts, with all its columns and these. Every analysis that counts
-- a signal (replans.sql, trend.sql, effect.sql, replans_comparison.sql) reads
-- it from this view, and so does the report, through those analyses.
--
--   ended              agent.session.ended was seen; every rate is over ended
--                      sessions. A session without it is open: still running,
--                      or its agent died (session_facts.ended)
--   unknown_outcome    it ended with outcome 'unknown': there is no evidence of
--                      how it went (schema/README.md). Every success rate and
--                      first-try success rate leaves such sessions out, of
--                      its numerator and its denominator (both are false
--                      here for them), and the analyses count them apart;
--                      every other figure (replans, tool calls, hints)
--                      counts them as any ended session
--   success            it ended with outcome 'success'
--   first_try_success  it succeeded without a single update_task_plan call,
--                      valid or rejected (replan_attempts = 0)
--   replanned          it has at least one valid replan (an accepted
--                      update_task_plan call)
--   over_cap           one of its update_task_plan calls was at or past the
--                      soft cap (session_facts.over_cap, from replans.over_cap)
--   reported_replans_mismatch
--                      the agent's own replan count (agent.session.ended
--                      replans, which counts attempts) differs from its
--                      agent.plan.updated events: a data-quality signal
--   has_plan           it has a plan (planned_sessions.sql): its replans are
--                      counted (session_facts.has_plan)
--   inferred_redecisions
--                      plan-less sessions only (NULL when has_plan): the
--                      re-decisions inferred from its tool calls, its rows
--                      in inferred_redecisions.sql (session_facts, stored
--                      like the other facts). An estimate, never part of
--                      replanned or valid_replans
--
-- The booleans are true or false, never NULL: a session that has not ended
-- has not succeeded. ended and over_cap keep the names and values of
-- session_facts.
CREATE OR REPLACE VIEW session_signals AS
SELECT *
       REPLACE (coalesce(ended, false)    AS ended,
                coalesce(over_cap, false) AS over_cap),
       coalesce(ended AND outcome = 'unknown', false)                 AS unknown_outcome,
       coalesce(outcome = 'success', false)                           AS success,
       coalesce(outcome = 'success' AND replan_attempts = 0, false)   AS first_try_success,
       coalesce(valid_replans > 0, false)                             AS replanned,
       coalesce(ended, false)
           AND reported_replans IS DISTINCT FROM replan_attempts      AS reported_replans_mismatch
FROM session_facts;
