-- agent.model.called (v1.3) → model_calls
INSERT INTO model_calls
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       data->>'$.model',
       CAST(data->>'$.input_tokens' AS BIGINT),
       CAST(data->>'$.output_tokens' AS BIGINT),
       CAST(data->>'$.cached_input_tokens' AS BIGINT),
       CAST(data->>'$.duration_ms' AS BIGINT)
FROM batch_events
WHERE type = 'agent.model.called';
