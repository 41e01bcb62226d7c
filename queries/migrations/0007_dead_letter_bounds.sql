-- Dead letters are bounded (docs/operations.md, "Limits"): the writer keeps
-- at most the first store.MaxDeadLetterRaw bytes of a rejected message in
-- raw, and beside them the size and SHA-256 of the whole, so that a
-- truncated dead letter still says what it was. A replay refuses a
-- truncated one (reason_code 'truncated'): its event is not all there.
ALTER TABLE dead_letters ADD COLUMN raw_size BIGINT;   -- bytes of the message as received
ALTER TABLE dead_letters ADD COLUMN raw_sha256 VARCHAR; -- hex SHA-256 of the message as received
UPDATE dead_letters SET raw_size = octet_length(raw), raw_sha256 = sha256(raw);
