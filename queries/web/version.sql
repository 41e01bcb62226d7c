-- What the live pages poll: the number of committed batches and the time of
-- the last. A page changes only when one of them does.
-- Parameters: none.
SELECT count(*) AS batches, max(committed_at) AS last_commit FROM ingest_batches;
