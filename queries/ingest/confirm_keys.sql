-- Which of these candidate keys (hashes already in the in-memory set) are
-- really stored: the exact check behind the set. A hash join of the
-- candidates against the key_hash column, then the exact (source, id)
-- comparison happens in Go.
SELECT e.key_hash, e.source, e.id
FROM events e
SEMI JOIN (SELECT unnest($1::UBIGINT[]) AS h) c ON e.key_hash = c.h;
