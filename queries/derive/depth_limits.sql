-- agent.depth_limit.reached → depth_limits
INSERT INTO depth_limits
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       CAST(data->>'$.tool_calls' AS INTEGER),
       CAST(data->>'$.limit' AS INTEGER)
FROM batch_events
WHERE type = 'agent.depth_limit.reached';
