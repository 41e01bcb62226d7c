-- Classify the stored facts that no event gives a type and that are not
-- classified yet (those of the sessions just refreshed, or all after a
-- taxonomy change) with the ingester's taxonomy, so that analyses with the
-- same taxonomy need not classify them (see facts_classifier). Each
-- distinct description is classified once. Parameters: $tax_types,
-- $tax_patterns (see include/classify_case.sql).
UPDATE task_facts_stored f
SET class_type = c.type, classified = true
FROM (
    SELECT d,
           -- @include include/classify_case.sql
           AS type
    FROM (SELECT DISTINCT lower(description) AS d
          FROM task_facts_stored
          WHERE NOT classified AND given_type IS NULL AND description IS NOT NULL)
) c
WHERE NOT f.classified AND f.given_type IS NULL AND f.description IS NOT NULL
  AND lower(f.description) = c.d;
