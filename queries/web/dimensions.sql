-- The values the pages offer to filter by: each agent, model and task type
-- of the sessions (views/session_signals.sql), at most $limit of each, by
-- name.
-- Parameters: $limit (BIGINT).
SELECT dim, value
FROM (
    SELECT 'agent' AS dim, agent AS value FROM session_signals WHERE agent IS NOT NULL
    UNION
    SELECT 'model', model FROM session_signals WHERE model IS NOT NULL
    UNION
    SELECT 'task_type', task_type FROM session_signals WHERE task_type IS NOT NULL
)
QUALIFY row_number() OVER (PARTITION BY dim ORDER BY value) <= $limit
ORDER BY dim, value;
