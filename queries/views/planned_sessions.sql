-- The sessions that have a plan: one row per session with a plan version
-- (agent.plan.created or a valid agent.plan.updated, table plans) or an
-- update_task_plan attempt, valid or rejected (table replans). Every other
-- session is plan-less: its replans cannot be counted, only inferred
-- (inferred_redecisions.sql). session_signals.has_plan reads this view.
CREATE OR REPLACE VIEW planned_sessions AS
SELECT session FROM plans
UNION
SELECT session FROM replans;
