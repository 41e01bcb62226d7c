-- The taxonomy the stored facts are classified with: $1 is its id.
INSERT INTO facts_classifier VALUES ($1);
