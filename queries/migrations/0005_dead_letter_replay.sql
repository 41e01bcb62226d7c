-- Dead letters can be replayed (ingest -replay-dead-letters): run again
-- through the current validation and store, after a fix or a schema
-- change. See docs/sql.md, "Replaying dead letters".

-- Each dead letter gets a number to name it by: the writer numbers new
-- ones after the largest, and those already stored are numbered here in
-- table order. (No DEFAULT nextval(): DuckDB cannot replay such an ALTER
-- from its write-ahead log after a crash.)
ALTER TABLE dead_letters ADD COLUMN dead_id BIGINT;
UPDATE dead_letters SET dead_id = rowid + 1;

-- One row per replay of a dead letter. A dead letter replayed as stored or
-- duplicate is resolved, and never replayed again; one still dead keeps its
-- row in dead_letters, with reason_code and reason set to the replay's, and
-- this table keeps what they were before.
CREATE TABLE dead_letter_replays (
    dead_id         BIGINT      NOT NULL, -- dead_letters.dead_id
    replayed_at     TIMESTAMPTZ NOT NULL, -- commit time of the replay's batch
    result          VARCHAR     NOT NULL, -- stored | duplicate | still_dead
    previous_code   VARCHAR     NOT NULL, -- the dead letter's reason_code before this replay
    previous_reason VARCHAR     NOT NULL  -- and its reason
);
