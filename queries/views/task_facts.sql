-- Every fact the hints, mappings and rules analyses count (see
-- task_facts_pending.sql for what each fact is): the stored rows
-- (task_facts_stored) of the sessions that are not pending, computed rows
-- for those that are.
CREATE OR REPLACE VIEW task_facts AS
SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
UNION ALL BY NAME
SELECT * FROM task_facts_pending;
