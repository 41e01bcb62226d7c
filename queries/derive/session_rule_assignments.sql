-- agent.session.started assignment.rules (v1.4) → session_rule_assignments:
-- each rule's own arm, at its 1-based position (unnested in the select
-- list, with generate_subscripts, as plan_tasks.sql).
INSERT INTO session_rule_assignments
WITH a AS (
    SELECT session, source, id, seq, time, data->>'$.assignment.ruleset' AS ruleset,
           from_json(data->'$.assignment.rules', '[{"id":"VARCHAR","arm":"VARCHAR","holdout":"DOUBLE"}]') AS rules
    FROM batch_events
    WHERE type = 'agent.session.started' AND (data->'$.assignment.rules') IS NOT NULL
), r AS (
    SELECT session, source, id, seq, time, ruleset, unnest(rules) AS arm_of, generate_subscripts(rules, 1) AS pos
    FROM a
)
SELECT session, source, id, seq, time, ruleset, CAST(pos AS BIGINT), arm_of.id, arm_of.arm, arm_of.holdout
FROM r;
