-- A decision_rules row (skilllite-evolution/src/feedback.rs:248-254).
-- ?1 decision_id, ?2 rule_id.
INSERT INTO decision_rules (decision_id, rule_id) VALUES (?1, ?2)
