-- analyze export: the plan_tasks rows of the plan versions committed in
-- ($after, $upto], with their partition day, the UTC date of their parent
-- event's time.
--   $after  TIMESTAMPTZ  the previous export's mark (exclusive); NULL = from the start
--   $upto   TIMESTAMPTZ  this export's mark (inclusive): max(events.ingested_at)
-- A plan_tasks row points at its parent by (session, plan_seq): the
-- agent.plan.created or agent.plan.updated event with that session and seq.
-- The rows of a key are exported once, with the first parent event of that
-- key to be committed (seq is unique within a session; should an agent
-- reuse one, reused_keys.sql counts it and the export warns).
WITH touched AS (
    SELECT DISTINCT session, seq
    FROM events
    WHERE type IN ('agent.plan.created', 'agent.plan.updated')
      AND ($after IS NULL OR ingested_at > $after) AND ingested_at <= $upto
), parent AS (
    SELECT e.session, e.seq, min(e.ingested_at) AS committed, min(e.time) AS time
    FROM events e
    SEMI JOIN touched k ON k.session = e.session AND k.seq = e.seq
    WHERE e.type IN ('agent.plan.created', 'agent.plan.updated')
    GROUP BY e.session, e.seq
)
SELECT t.*, CAST(timezone('UTC', p.time) AS DATE) AS day
FROM plan_tasks t
JOIN parent p ON p.session = t.session AND p.seq = t.plan_seq
WHERE ($after IS NULL OR p.committed > $after) AND p.committed <= $upto
ORDER BY p.time, t.session, t.plan_seq, t.position
