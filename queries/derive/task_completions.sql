-- agent.task.completed → task_completions
INSERT INTO task_completions
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       data->>'$.completion',
       data->>'$.reported',
       CAST(data->>'$.tool_calls' AS BIGINT),
       data->>'$.summary'
FROM batch_events
WHERE type = 'agent.task.completed';
