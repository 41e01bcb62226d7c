-- DuckDB's own parse tree of a query ($1), as JSON: {"error": true, …} for
-- anything but SELECT statements, else {"statements": [...]}, in which every
-- table function appears as {"type": "TABLE_FUNCTION", "function":
-- {"function_name": …}} and every function call as {"class": "FUNCTION",
-- "function_name": …}. The service refuses table functions outside its
-- allow-list (guard.go).
SELECT json_serialize_sql($1::VARCHAR);
