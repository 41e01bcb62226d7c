-- analyze export: plan events committed in ($after, $upto] whose (session,
-- seq) a plan event committed at or before $after already has. The child
-- rows (plan_tasks, replan_dropped) of such a key were exported with the
-- first event and are not exported again; the export warns with this count.
--   $after  TIMESTAMPTZ  the previous export's mark (exclusive); NULL = from the start
--   $upto   TIMESTAMPTZ  this export's mark (inclusive)
SELECT count(*) AS reused
FROM events n
SEMI JOIN events o
    ON  o.session = n.session AND o.seq = n.seq
    AND o.type IN ('agent.plan.created', 'agent.plan.updated')
    AND o.ingested_at <= $after
WHERE n.type IN ('agent.plan.created', 'agent.plan.updated')
  AND n.ingested_at > $after AND n.ingested_at <= $upto
