-- The rule ids SkillLite matched for each decision
-- (skilllite-evolution/src/feedback.rs:137-140, written at 248-254).
-- No parameters.
SELECT decision_id, rule_id
FROM decision_rules
WHERE decision_id IS NOT NULL
ORDER BY decision_id, rowid
