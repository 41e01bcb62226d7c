-- The facts_pending appender's statement: the sessions of a batch (each
-- appended once, in batch_sessions: the appender's own relation, one column
-- session) that are not pending yet. The same rows as
-- derive/facts_pending.sql gives from the batch's events.
INSERT INTO facts_pending
SELECT session FROM batch_sessions b
WHERE NOT EXISTS (SELECT 1 FROM facts_pending p WHERE p.session = b.session);
