-- A decisions row as SkillLite's insert_decision writes it
-- (skilllite-evolution/src/feedback.rs:228-246); ts '' takes the column's
-- default, datetime('now').
-- ?1 ts, ?2 session_id ('' for NULL), ?3 total_tools, ?4 failed_tools,
-- ?5 replans, ?6 task_completed, ?7 completion_type, ?8 completion_type_reported.
INSERT INTO decisions (ts, session_id, total_tools, failed_tools, replans, elapsed_ms,
    task_completed, completion_type, completion_type_reported, feedback,
    task_description, tools_detail, tool_sequence_key)
VALUES (COALESCE(NULLIF(?1, ''), datetime('now')), NULLIF(?2, ''), ?3, ?4, ?5, 1000,
    ?6, ?7, ?8, 'neutral', 'a task', '[]', NULL)
