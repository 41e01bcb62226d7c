-- Day rollups of the stored facts (docs/sql.md, "Day rollups"): the counts
-- the hints and the rules analyses read, per UTC day of the sessions'
-- start and the dimensions those analyses filter and group by, kept by
-- the refresh of the stored facts for the days it touched (ingest/
-- rollup_hints.sql, ingest/rollup_replace.sql). An analysis reads a day
-- from here when the day lies whole in its window and none of the day's
-- sessions is pending; every other day it computes from the facts, as
-- before (include/rollup_split.sql). Derived data only: the facts stay
-- the truth, and the rollups are built anew whenever they could disagree.

-- include/hint_counts.sql per day, agent, agent version, model, rule set,
-- resolved task type and hint.
CREATE TABLE hint_days (
    day             DATE NOT NULL,
    week            DATE,
    agent           VARCHAR,
    agent_version   VARCHAR,
    model           VARCHAR,
    ruleset         VARCHAR,
    task_type       VARCHAR,
    hint            VARCHAR,
    calls           BIGINT NOT NULL,
    failed          BIGINT NOT NULL,
    followed        BIGINT NOT NULL,
    followed_failed BIGINT NOT NULL,
    deviated        BIGINT NOT NULL,
    deviated_failed BIGINT NOT NULL,
    planned         BIGINT NOT NULL,
    dropped         BIGINT NOT NULL,
    stripped        BIGINT NOT NULL
);

-- include/replace_counts.sql per day, agent, model, resolved task type and
-- the hints of the swap.
CREATE TABLE replace_days (
    day       DATE NOT NULL,
    agent     VARCHAR,
    model     VARCHAR,
    task_type VARCHAR,
    from_hint VARCHAR,
    to_hint   VARCHAR,
    replans   BIGINT NOT NULL,
    added     BIGINT NOT NULL,
    completed BIGINT NOT NULL,
    succeeded BIGINT NOT NULL
);

-- At most one row: the rollups hold every stored fact, their task types
-- resolved with this taxonomy (its id, as facts_classifier). No row: they
-- hold nothing yet, and every analysis computes from the facts. The store
-- builds them whole when this differs from its taxonomy.
CREATE TABLE rollups (classifier VARCHAR NOT NULL);
