-- The database's identity (migration 0004): its random id.
SELECT id FROM database_identity;
