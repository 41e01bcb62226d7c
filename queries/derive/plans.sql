-- Plan versions: agent.plan.created, and agent.plan.updated when valid → plans
INSERT INTO plans
SELECT session, source, id, seq, time,
       CASE type WHEN 'agent.plan.created' THEN 'created' ELSE 'replan' END,
       CAST(data->>'$.replan' AS BIGINT),
       data->>'$.origin',
       data->>'$.parse_error',
       CAST(json_array_length(data->'$.tasks') AS BIGINT)
FROM batch_events
WHERE type = 'agent.plan.created'
   OR (type = 'agent.plan.updated' AND CAST(data->>'$.valid' AS BOOLEAN));
