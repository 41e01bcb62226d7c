-- Which of these candidate keys (hashes already in the in-memory set) are
-- really stored, with the stored event's content: the exact check behind
-- the set. The exact (source, id) comparison, and that of the content (a
-- re-send, or another event under the same key), happen in Go. JSON as
-- text: the driver would decode it, and numbers would lose how they were
-- written.
--
-- In two steps, so that the wide columns are read only near the rows
-- wanted: the inner semi-join reads the key_hash column alone and yields
-- the rowids of the matches; the outer one reads the other columns only in
-- the row groups between the least and the greatest of those rowids (DuckDB
-- pushes their range into the scan). Re-sent events come in runs (a spool
-- replayed, a file loaded again), so that range is narrow; a hash join on
-- key_hash would read every column of the whole table for each batch.
-- $1: the candidate key hashes (UBIGINT[]).
SELECT e.key_hash, e.source, e.id, e.type, e.time, e.session, e.seq, e.data::VARCHAR, e.ext::VARCHAR
FROM events e
WHERE e.rowid IN (
    SELECT k.rowid
    FROM events k
    SEMI JOIN (SELECT unnest($1::UBIGINT[]) AS h) c ON k.key_hash = c.h
);
