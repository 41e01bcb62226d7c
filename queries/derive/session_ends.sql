-- agent.session.ended → session_ends
INSERT INTO session_ends
SELECT session, source, id, seq, time,
       data->>'$.outcome',
       CAST(data->>'$.replans' AS INTEGER),
       CAST(data->>'$.tool_calls' AS INTEGER),
       CAST(data->>'$.failed_tool_calls' AS INTEGER),
       CAST(data->>'$.iterations' AS INTEGER),
       CAST(data->>'$.duration_ms' AS BIGINT),
       data->>'$.feedback'
FROM batch_events
WHERE type = 'agent.session.ended';
