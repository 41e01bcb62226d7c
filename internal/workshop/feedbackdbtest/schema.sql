-- The two tables of SkillLite's feedback.sqlite that the cross-check reads,
-- as SkillLite creates them: EXboys/skilllite at b57e289,
-- crates/skilllite-evolution/src/feedback.rs:119-140 (ensure_evolution_tables).
-- Tests build a feedback.sqlite with it.
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts TEXT NOT NULL DEFAULT (datetime('now')),
    session_id TEXT,
    total_tools INTEGER DEFAULT 0,
    failed_tools INTEGER DEFAULT 0,
    replans INTEGER DEFAULT 0,
    elapsed_ms INTEGER DEFAULT 0,
    task_completed BOOLEAN DEFAULT 0,
    completion_type TEXT DEFAULT 'success',
    completion_type_reported TEXT DEFAULT 'success',
    feedback TEXT DEFAULT 'neutral',
    evolved BOOLEAN DEFAULT 0,
    task_description TEXT,
    tools_detail TEXT,
    tool_sequence_key TEXT
);

CREATE TABLE IF NOT EXISTS decision_rules (
    decision_id INTEGER REFERENCES decisions(id) ON DELETE CASCADE,
    rule_id TEXT NOT NULL
);
