-- session_facts computed for the pending sessions only (the sessions of
-- facts_pending). Every scan is restricted to them, so the cost follows the
-- number of pending sessions. The stored rows (session_facts_stored) have
-- these columns: a column added here needs a migration that adds it there.
CREATE OR REPLACE VIEW session_facts_pending AS
WITH
-- @include include/session_facts_of.sql
