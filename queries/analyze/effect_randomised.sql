-- analyze effect (randomised): for each rule set version that held out a
-- share of its sessions (agent.session.started assignment, v1.4;
-- session_assignments), its two randomised arms, rules and holdout, over
-- the ended sessions of the window; and for each rule with a holdout of
-- its own (assignment.rules; session_rule_assignments), the rule's two
-- arms within the set's rules arm: sessions applying it against those
-- holding it out, the other rules drawn on their own in both.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), as replans.sql ($by is not used:
-- the arms are compared whole, as they were randomised).
-- The unit is what was assigned: the session, or the workspace (unit
-- 'workspace': its sessions share one arm, and the unit's outcome is the
-- mean over its sessions). Per unit and metric, y is the unit's rate:
--   success       outcome 'success', over its sessions of known outcome
--                 (NULL when it has none)
--   first_try     success without a single update_task_plan call, likewise
--   replanned     a valid replan (every ended session counts)
--   tokens        input + output tokens per session (model_calls), over its
--                 sessions with any (NULL when none reported tokens)
-- One row per version (rule NULL), then one per version and rule (rule:
-- its id): the share (holdout; holdouts > 1 when the sessions reported
-- several), the units and sessions of each arm, mixed_units (units
-- reported in both arms: a broken assignment, left out), per arm and
-- metric n_<arm>_u_<m> (units with a y), sy_<arm>_<m> (Σ y) and
-- sy2_<arm>_<m> (Σ y²), and the session counts of each arm (k_<arm>_<m> of
-- n_<arm>_<m>; tokens: the sum and the sessions with tokens). The analyzer
-- derives the effect (the difference of the arms' unit means, rules minus
-- holdout), its always-valid interval and the sample-ratio check.
WITH s AS (
-- @include include/selected_sessions.sql
      AND ended
), tok AS (
    SELECT session, sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens
    FROM model_calls SEMI JOIN s USING (session)
    WHERE input_tokens IS NOT NULL OR output_tokens IS NOT NULL
    GROUP BY session
), arms AS (
    -- the set's arm of each session, and each rule's own arm (drawn in
    -- the set's rules arm, reported by the same start event)
    SELECT session, source, event_id, ruleset, CAST(NULL AS VARCHAR) AS rule, arm, holdout
    FROM session_assignments
    UNION ALL
    SELECT session, source, event_id, ruleset, rule, arm, holdout
    FROM session_rule_assignments
), sess AS (
    SELECT x.ruleset, x.rule, x.arm, x.holdout,
           CASE WHEN a.unit = 'workspace' THEN 'w:' || coalesce(a.unit_id, a.session) ELSE 's:' || a.session END AS unit,
           s.unknown_outcome, s.success, s.first_try_success, s.replanned, tok.tokens
    FROM arms x
    JOIN session_assignments a USING (session, source, event_id)
    JOIN s USING (session)
    LEFT JOIN tok USING (session)
), units AS (
    SELECT ruleset, rule, unit,
           count(DISTINCT arm) AS arms,
           min(arm) AS arm,
           max(holdout) AS h,
           count(*) AS sessions,
           avg(CAST(success AS DOUBLE)) FILTER (WHERE NOT unknown_outcome)           AS y_success,
           avg(CAST(first_try_success AS DOUBLE)) FILTER (WHERE NOT unknown_outcome) AS y_first_try,
           avg(CAST(replanned AS DOUBLE))                                            AS y_replanned,
           avg(CAST(tokens AS DOUBLE))                                               AS y_tokens
    FROM sess
    GROUP BY ruleset, rule, unit
), per_version AS (
    -- per arm and metric: the units with a y, Σ y and Σ y² (summed as
    -- decimals, so that no order of summation changes a digit); units in
    -- both arms (mixed) are left out
    SELECT ruleset, rule,
           max(h)                                               AS holdout,
           count(DISTINCT h)                                    AS holdouts,
           count(*) FILTER (WHERE arm = 'rules' AND arms = 1)   AS units_rules,
           count(*) FILTER (WHERE arm = 'holdout' AND arms = 1) AS units_holdout,
           count(*) FILTER (WHERE arms > 1)                     AS mixed_units,
           CAST(sum(sessions) FILTER (WHERE arm = 'rules') AS BIGINT)   AS sessions_rules,
           CAST(sum(sessions) FILTER (WHERE arm = 'holdout') AS BIGINT) AS sessions_holdout,
           count(y_success) FILTER (WHERE arm = 'rules' AND arms = 1) AS n_rules_u_success,
           CAST(sum(CAST(y_success AS DECIMAL(38, 9))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy_rules_success,
           CAST(sum(CAST(y_success * y_success AS DECIMAL(38, 6))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy2_rules_success,
           count(y_success) FILTER (WHERE arm = 'holdout' AND arms = 1) AS n_holdout_u_success,
           CAST(sum(CAST(y_success AS DECIMAL(38, 9))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy_holdout_success,
           CAST(sum(CAST(y_success * y_success AS DECIMAL(38, 6))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy2_holdout_success,
           count(y_first_try) FILTER (WHERE arm = 'rules' AND arms = 1) AS n_rules_u_first_try,
           CAST(sum(CAST(y_first_try AS DECIMAL(38, 9))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy_rules_first_try,
           CAST(sum(CAST(y_first_try * y_first_try AS DECIMAL(38, 6))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy2_rules_first_try,
           count(y_first_try) FILTER (WHERE arm = 'holdout' AND arms = 1) AS n_holdout_u_first_try,
           CAST(sum(CAST(y_first_try AS DECIMAL(38, 9))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy_holdout_first_try,
           CAST(sum(CAST(y_first_try * y_first_try AS DECIMAL(38, 6))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy2_holdout_first_try,
           count(y_replanned) FILTER (WHERE arm = 'rules' AND arms = 1) AS n_rules_u_replanned,
           CAST(sum(CAST(y_replanned AS DECIMAL(38, 9))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy_rules_replanned,
           CAST(sum(CAST(y_replanned * y_replanned AS DECIMAL(38, 6))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy2_rules_replanned,
           count(y_replanned) FILTER (WHERE arm = 'holdout' AND arms = 1) AS n_holdout_u_replanned,
           CAST(sum(CAST(y_replanned AS DECIMAL(38, 9))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy_holdout_replanned,
           CAST(sum(CAST(y_replanned * y_replanned AS DECIMAL(38, 6))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy2_holdout_replanned,
           count(y_tokens) FILTER (WHERE arm = 'rules' AND arms = 1) AS n_rules_u_tokens,
           CAST(sum(CAST(y_tokens AS DECIMAL(38, 9))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy_rules_tokens,
           CAST(sum(CAST(y_tokens * y_tokens AS DECIMAL(38, 6))) FILTER (WHERE arm = 'rules' AND arms = 1) AS DOUBLE) AS sy2_rules_tokens,
           count(y_tokens) FILTER (WHERE arm = 'holdout' AND arms = 1) AS n_holdout_u_tokens,
           CAST(sum(CAST(y_tokens AS DECIMAL(38, 9))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy_holdout_tokens,
           CAST(sum(CAST(y_tokens * y_tokens AS DECIMAL(38, 6))) FILTER (WHERE arm = 'holdout' AND arms = 1) AS DOUBLE) AS sy2_holdout_tokens
    FROM units
    GROUP BY ruleset, rule
), arm_counts AS (
    SELECT ruleset, rule,
           count(*) FILTER (WHERE arm = 'rules' AND NOT unknown_outcome)                       AS n_rules_success,
           count(*) FILTER (WHERE arm = 'rules' AND success)                                   AS k_rules_success,
           count(*) FILTER (WHERE arm = 'holdout' AND NOT unknown_outcome)                     AS n_holdout_success,
           count(*) FILTER (WHERE arm = 'holdout' AND success)                                 AS k_holdout_success,
           count(*) FILTER (WHERE arm = 'rules' AND first_try_success)                         AS k_rules_first_try,
           count(*) FILTER (WHERE arm = 'holdout' AND first_try_success)                       AS k_holdout_first_try,
           count(*) FILTER (WHERE arm = 'rules')                                               AS n_rules_replanned,
           count(*) FILTER (WHERE arm = 'rules' AND replanned)                                 AS k_rules_replanned,
           count(*) FILTER (WHERE arm = 'holdout')                                             AS n_holdout_replanned,
           count(*) FILTER (WHERE arm = 'holdout' AND replanned)                               AS k_holdout_replanned,
           count(tokens) FILTER (WHERE arm = 'rules')                                          AS n_rules_tokens,
           CAST(coalesce(sum(tokens) FILTER (WHERE arm = 'rules'), 0) AS BIGINT)               AS sum_rules_tokens,
           count(tokens) FILTER (WHERE arm = 'holdout')                                        AS n_holdout_tokens,
           CAST(coalesce(sum(tokens) FILTER (WHERE arm = 'holdout'), 0) AS BIGINT)             AS sum_holdout_tokens
    FROM sess
    GROUP BY ruleset, rule
)
SELECT p.*, c.* EXCLUDE (ruleset, rule)
FROM per_version p
JOIN arm_counts c ON c.ruleset = p.ruleset AND c.rule IS NOT DISTINCT FROM p.rule
ORDER BY p.ruleset, p.rule NULLS FIRST;
