-- agent.tool.called args_digest (v1.3) → tool_call_args
INSERT INTO tool_call_args
SELECT session, source, id, seq, time, data->>'$.args_digest'
FROM batch_events
WHERE type = 'agent.tool.called' AND (data->>'$.args_digest') IS NOT NULL;
