-- The outcome of the last replay of these dead letters (NULL if never
-- replayed), with their reason code and reason now.
--   $1  BIGINT[]  their dead_id values
SELECT d.dead_id, r.result, d.reason_code, d.reason
FROM dead_letters d
LEFT JOIN (SELECT dead_id, arg_max(result, replayed_at) AS result
           FROM dead_letter_replays GROUP BY dead_id) r ON r.dead_id = d.dead_id
WHERE d.dead_id IN (SELECT unnest($1::BIGINT[]));
