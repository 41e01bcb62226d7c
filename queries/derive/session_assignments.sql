-- agent.session.started assignment (v1.4) → session_assignments
INSERT INTO session_assignments
SELECT session, source, id, seq, time,
       data->>'$.assignment.ruleset',
       data->>'$.assignment.arm',
       CAST(data->'$.assignment.holdout' AS DOUBLE),
       data->>'$.assignment.unit',
       data->>'$.assignment.unit_id'
FROM batch_events
WHERE type = 'agent.session.started' AND (data->>'$.assignment.arm') IS NOT NULL;
