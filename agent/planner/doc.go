// Package planner is the planning semantics of the seed agent (SkillLite) as
// a library an agent loop calls, instrumented: every step emits its evosignal
// events (schema/README.md) through an *agent.Session.
//
// A session, as the agent loop drives it:
//
//	p, err := planner.New(session, planner.Config{Tools: tools, Rules: rules})
//	p.Start(ctx, planner.StartInfo{Goal: goal, AgentVersion: "0.9.4", Model: model})
//	p.NewPlan(ctx, goal, modelAnswer)               // agent.plan.created (+ agent.hint.stripped)
//	for each model turn {
//		p.Iterate()
//		for each tool call the model makes {
//			switch name {
//			case planner.ToolCompleteTask:   res, err = p.CompleteTask(ctx, id, completion, summary)
//			case planner.ToolUpdateTaskPlan: res, err = p.UpdateTaskPlan(ctx, tasks, reason, "")
//			default:                         run it; res, err = p.RecordToolCall(ctx, name, ok, kind, msg, took)
//			}
//			hand res.Message (if any) to the model with the tool result
//		}
//	}
//	p.End(ctx, events.OutcomeSuccess, "")       // agent.session.ended
//
// # Event order
//
// The order follows the conventions of the sample sessions in
// testdata/events/valid (see internal/events/sessions_test.go):
//
//   - Start: agent.session.started.
//   - NewPlan, NewPlanFromTasks: the plan is sanitised first (see
//     SanitizeAndEnhance), then agent.plan.created shows the sanitised
//     tasks, then one agent.hint.stripped (phase plan) per removed hint —
//     the contract puts hint.stripped right after the plan event it
//     concerns.
//   - UpdateTaskPlan: agent.plan.updated, then its agent.hint.stripped
//     (phase replan), then the update_task_plan call itself as
//     agent.tool.called (control, task_id null, ok = valid).
//   - CompleteTask: the complete_task call as agent.tool.called (control,
//     for the task), then agent.task.completed, whose tool_calls counts
//     that call too.
//   - RecordToolCall: agent.tool.called, then, the first time the task's
//     budget is used up, agent.depth_limit.reached.
//   - End: agent.session.ended.
//
// A step the planner refuses on the model's behalf (an empty replan,
// completing a task that is not the current one) is not an error: the
// Result says Accepted false and carries the message for the model. Errors
// are for the caller: a step out of order (ErrSequence), a bad argument, or
// the sink failing to take an event. The planner's state advances even when
// the sink fails (the step happened); the error reports the lost events.
//
// The messages the planner hands to the model are in messages.go.
//
// A Planner is one session. It is safe for concurrent use (an agent loop may
// record parallel tool calls from several goroutines); steps are serialised
// and each step's events are emitted together, in order.
package planner
