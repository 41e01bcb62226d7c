-- The events appender's statement: DuckDB runs it, inside the batch's
-- transaction, over the rows appended since the last flush, batch_events
-- (the appender's own relation, with the columns of events in any order;
-- data and ext as VARCHAR, so that the bytes are stored as they are and
-- checked by the cast to JSON). derive/*.sql read the same columns.
INSERT INTO events BY NAME
SELECT * REPLACE (CAST(data AS JSON) AS data, CAST(ext AS JSON) AS ext)
FROM batch_events;
