-- Contract v1.4 (schema/README.md, "Randomised holdouts"): the arms of the
-- rules with a holdout of their own, drawn within a rule set's rules arm
-- (agent.session.started assignment.rules). A table of its own, as
-- session_assignments, so that no table's columns change under a lake.

-- One row per rule arm of a session start, at its 1-based position.
CREATE TABLE session_rule_assignments (
    session  VARCHAR     NOT NULL,
    source   VARCHAR     NOT NULL,
    event_id VARCHAR     NOT NULL,
    seq      BIGINT      NOT NULL,
    time     TIMESTAMPTZ NOT NULL,
    ruleset  VARCHAR     NOT NULL, -- the rule set the session was assigned against
    position BIGINT      NOT NULL, -- in assignment.rules, from 1
    rule     VARCHAR     NOT NULL, -- the rule's id
    arm      VARCHAR     NOT NULL, -- rules (applied) | holdout (held out)
    holdout  DOUBLE      NOT NULL  -- the rule's holdout share
);

-- Those already in the event log (the rows
-- derive/session_rule_assignments.sql derives from it).
INSERT INTO session_rule_assignments
WITH a AS (
    SELECT session, source, id, seq, time, data->>'$.assignment.ruleset' AS ruleset,
           from_json(data->'$.assignment.rules', '[{"id":"VARCHAR","arm":"VARCHAR","holdout":"DOUBLE"}]') AS rules
    FROM events
    WHERE type = 'agent.session.started' AND (data->'$.assignment.rules') IS NOT NULL
), r AS (
    SELECT session, source, id, seq, time, ruleset, unnest(rules) AS arm_of, generate_subscripts(rules, 1) AS pos
    FROM a
)
SELECT session, source, id, seq, time, ruleset, CAST(pos AS BIGINT), arm_of.id, arm_of.arm, arm_of.holdout
FROM r;
