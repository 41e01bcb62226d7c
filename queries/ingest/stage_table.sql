-- The writer connection's staging table: each batch is appended here, copied
-- into events and derived into the typed tables, then deleted, all in one
-- transaction. It has the columns of events, with the JSON ones as VARCHAR
-- so the appender writes the bytes as they are (INSERT INTO events checks
-- and casts them).
CREATE TEMP TABLE IF NOT EXISTS batch_events AS
SELECT * REPLACE (data::VARCHAR AS data, ext::VARCHAR AS ext) FROM events LIMIT 0;
