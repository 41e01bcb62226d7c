-- Where a refresh of the stored facts starts reading (docs/sql.md, "Stored
-- facts"). The typed tables are append-only (a rebuild refills them and
-- empties these two tables), so the rows a session gains after a refresh
-- come after every row that refresh saw: a refresh need only read each
-- typed table from the row count it had at the refresh before the oldest
-- pending session first appeared, and DuckDB skips the row groups below
-- that (a rowid range), instead of reading the whole table.

-- Per refresh (generation), the rows each typed table the facts read had in
-- its snapshot. One row per refresh.
CREATE TABLE facts_generations (
    gen              BIGINT NOT NULL,
    events           BIGINT NOT NULL,
    session_starts   BIGINT NOT NULL,
    session_ends     BIGINT NOT NULL,
    plans            BIGINT NOT NULL,
    plan_tasks       BIGINT NOT NULL,
    replans          BIGINT NOT NULL,
    replan_dropped   BIGINT NOT NULL,
    hints_stripped   BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    task_completions BIGINT NOT NULL
);

-- Per stored session, the generation whose row counts its rows all come
-- after (since): the refresh before the one that first stored it; -1: from
-- the first row. One row per session, added when it is first stored.
CREATE TABLE facts_sessions (
    session VARCHAR NOT NULL,
    since   BIGINT NOT NULL
);

-- The sessions stored before this migration may have rows anywhere.
INSERT INTO facts_sessions SELECT DISTINCT session, -1 FROM session_facts_stored;
