-- agent.tool.called → tool_calls
INSERT INTO tool_calls
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       data->>'$.tool',
       data->>'$.hint',
       CAST(data->>'$.ok' AS BOOLEAN),
       data->>'$.error_kind',
       data->>'$.error',
       CAST(data->>'$.duration_ms' AS BIGINT),
       CAST(data->>'$.control' AS BOOLEAN)
FROM batch_events
WHERE type = 'agent.tool.called';
