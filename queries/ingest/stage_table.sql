-- The writer connection's staging table: each batch is appended here, copied
-- into events and derived into the typed tables, then deleted, all in one
-- transaction. It has exactly the columns of events.
CREATE TEMP TABLE IF NOT EXISTS batch_events AS SELECT * FROM events LIMIT 0;
