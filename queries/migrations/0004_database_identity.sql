-- The database's identity: a random id made once, when this migration runs
-- (on the first open of a new database, or the first open after an
-- upgrade). The ingester records it on its durable JetStream consumer and
-- refuses a consumer recorded by another database; the query service names
-- it in its metadata and answers. One row, never changed.
CREATE TABLE database_identity (
    id         VARCHAR     NOT NULL, -- random UUID, e.g. 0b6f9a2e-…
    created_at TIMESTAMPTZ NOT NULL  -- when the id was made
);
INSERT INTO database_identity VALUES (CAST(gen_random_uuid() AS VARCHAR), now());
