-- The ingester's taxonomy changed: forget the stored classification.
-- record_classifier.sql then records the new taxonomy and
-- classify_facts.sql classifies every stored fact again, in the same
-- transaction.
UPDATE task_facts_stored SET class_type = NULL, classified = false WHERE classified;
DELETE FROM facts_classifier;
