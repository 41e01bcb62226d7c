-- One pass of a backlog refresh (facts_backlog.sql): the sessions numbered
-- ($1, $2] become the pending ones.
INSERT INTO facts_pending SELECT session FROM facts_backlog WHERE n > $1 AND n <= $2;
