-- Each tool call with the task it belongs to: the task with its task_id in
-- the plan version in force at the call (the latest plan version with a
-- smaller seq in the same session; ids are reused after a replan renumbers).
CREATE OR REPLACE VIEW tool_call_tasks AS
SELECT c.*,
       pv.seq          AS plan_seq,
       pt.description  AS task_description,
       pt.task_type    AS task_own_type,
       pt.tool_hint    AS task_hint
FROM tool_calls c
ASOF LEFT JOIN plans pv ON c.session = pv.session AND c.seq > pv.seq
LEFT JOIN plan_tasks pt ON pt.session = c.session AND pt.plan_seq = pv.seq AND pt.task_id = c.task_id;
