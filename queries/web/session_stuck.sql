-- Where one session got stuck: its occurrences of the states
-- analyze/stuck_states.sql defines, by seq.
-- Parameters: $session (VARCHAR).
WITH s AS (
    SELECT * FROM session_signals WHERE session = $session
),
-- @include analyze/stuck_states.sql
SELECT state, seq, detail FROM stuck ORDER BY seq, state;
