-- agent.session.ended → session_ends
INSERT INTO session_ends
SELECT session, source, id, seq, time,
       data->>'$.outcome',
       CAST(data->>'$.replans' AS BIGINT),
       CAST(data->>'$.tool_calls' AS BIGINT),
       CAST(data->>'$.failed_tool_calls' AS BIGINT),
       CAST(data->>'$.iterations' AS BIGINT),
       CAST(data->>'$.duration_ms' AS BIGINT),
       data->>'$.feedback'
FROM batch_events
WHERE type = 'agent.session.ended';
