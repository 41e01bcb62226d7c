-- One row per session seen, with what the analyzers group and filter by and
-- the counts they need: the stored rows (session_facts_stored, refreshed by
-- the ingester) of the sessions that are not pending, computed rows
-- (session_facts_pending.sql) for those that are, so a query always sees
-- every committed event. Replans are counted from agent.plan.updated events,
-- not from the agent's own report (reported_replans), so the two can be
-- compared. docs/sql.md, "Stored facts", says how the rows are kept.
CREATE OR REPLACE VIEW session_facts AS
SELECT s.* FROM session_facts_stored s ANTI JOIN facts_pending p USING (session)
UNION ALL BY NAME
SELECT * FROM session_facts_pending;
