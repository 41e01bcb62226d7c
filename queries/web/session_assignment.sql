-- The rules and arm one session ran with: its start's rule set and rules
-- (session_starts) and its randomised holdout arm (session_assignments),
-- if it had one.
-- Parameters: $session (VARCHAR).
SELECT st.ruleset, st.rules, a.ruleset AS assigned_ruleset, a.arm, a.holdout, a.unit, a.unit_id
FROM session_starts st
LEFT JOIN session_assignments a ON a.session = st.session
WHERE st.session = $session
ORDER BY st.seq
LIMIT 1;
