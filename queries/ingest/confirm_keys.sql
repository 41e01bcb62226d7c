-- Which of these candidate keys (hashes already in the in-memory set) are
-- really stored, with the stored event's content: the exact check behind
-- the set. A hash join of the candidates against the key_hash column; the
-- exact (source, id) comparison, and that of the content (a re-send, or
-- another event under the same key), happen in Go. JSON as text: the
-- driver would decode it, and numbers would lose how they were written.
SELECT e.key_hash, e.source, e.id, e.type, e.time, e.session, e.seq, e.data::VARCHAR, e.ext::VARCHAR
FROM events e
SEMI JOIN (SELECT unnest($1::UBIGINT[]) AS h) c ON e.key_hash = c.h;
