-- agent.session.started → session_starts
INSERT INTO session_starts
SELECT session, source, id, seq, time,
       data->>'$.agent',
       data->>'$.agent_version',
       data->>'$.model',
       data->>'$.goal',
       from_json(data->'$.tools', '["VARCHAR"]'),
       data->>'$.task_type',
       data->>'$.ruleset',
       from_json(data->'$.rules', '["VARCHAR"]')
FROM batch_events
WHERE type = 'agent.session.started';
