-- agent.session.ended usage (v1.2) → session_usage
INSERT INTO session_usage
SELECT session, source, id, seq, time,
       CAST(data->>'$.usage.model_calls' AS BIGINT),
       CAST(data->>'$.usage.input_tokens' AS BIGINT),
       CAST(data->>'$.usage.output_tokens' AS BIGINT),
       CAST(data->>'$.usage.cached_input_tokens' AS BIGINT),
       CAST(data->>'$.usage.model_ms' AS BIGINT)
FROM batch_events
WHERE type = 'agent.session.ended' AND (data->>'$.usage.model_calls') IS NOT NULL;
