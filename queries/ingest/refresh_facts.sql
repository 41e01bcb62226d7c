-- Refresh the stored facts of the pending sessions (see
-- migrations/0003_stored_facts.sql): replace their rows in
-- session_facts_stored and task_facts_stored with freshly computed ones,
-- then clear facts_pending. Run in one transaction, so a reader sees the
-- pending sessions either computed on the fly or stored, never both.
DELETE FROM session_facts_stored WHERE session IN (SELECT session FROM facts_pending);
DELETE FROM task_facts_stored WHERE session IN (SELECT session FROM facts_pending);
INSERT INTO session_facts_stored BY NAME SELECT * FROM session_facts_pending;
INSERT INTO task_facts_stored BY NAME SELECT * FROM task_facts_pending;
DELETE FROM facts_pending;
