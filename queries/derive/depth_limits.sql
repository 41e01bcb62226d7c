-- agent.depth_limit.reached → depth_limits
INSERT INTO depth_limits
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       CAST(data->>'$.tool_calls' AS BIGINT),
       CAST(data->>'$.limit' AS BIGINT)
FROM batch_events
WHERE type = 'agent.depth_limit.reached';
