-- Every row of SkillLite's decisions table
-- (skilllite-evolution/src/feedback.rs:119-135), oldest first.
-- Columns added by upstream's later migrations (completion_type,
-- completion_type_reported, feedback.rs:183-190) default to 'success'.
-- No parameters.
SELECT
    id,
    COALESCE(ts, ''),
    COALESCE(session_id, ''),
    CAST(COALESCE(total_tools, 0) AS INTEGER),
    CAST(COALESCE(failed_tools, 0) AS INTEGER),
    CAST(COALESCE(replans, 0) AS INTEGER),
    CAST(COALESCE(task_completed, 0) AS INTEGER),
    COALESCE(completion_type, 'success'),
    COALESCE(completion_type_reported, 'success')
FROM decisions
ORDER BY id
