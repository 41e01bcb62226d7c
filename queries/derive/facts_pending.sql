-- The sessions of the batch → facts_pending: their stored facts must be
-- computed again (migrations/0003_stored_facts.sql, ingest/refresh_facts.sql).
INSERT INTO facts_pending
SELECT DISTINCT session FROM batch_events b
WHERE NOT EXISTS (SELECT 1 FROM facts_pending p WHERE p.session = b.session);
