package planner

// The text the planner hands to the model (Result.Message), all in one
// place. The verbs are filled in by fmt.Sprintf where the message is used;
// their arguments are listed above each message.

const (
	// msgPlanUpdated: an accepted update_task_plan call.
	// Args: current task id, its description.
	msgPlanUpdated = "Task plan updated. Continue with task %d: %s"

	// msgSoftCap: an update_task_plan call at or past the soft cap, accepted
	// or not. Args: replans so far, the cap, current task id, its
	// description.
	msgSoftCap = "You have called update_task_plan %d times (the limit is %d). Stop replanning: " +
		"execute the plan step by step as it stands, starting with task %d: %s. " +
		"Call complete_task when each task is done."

	// msgSoftCapNoTask: as msgSoftCap when no task is pending. Args: replans
	// so far, the cap.
	msgSoftCapNoTask = "You have called update_task_plan %d times (the limit is %d). Stop replanning " +
		"and give your final answer."

	// msgRejectedEmptyPlan: an update_task_plan call with no new task (an
	// empty list, or only tasks already completed). No args.
	msgRejectedEmptyPlan = "update_task_plan rejected: the new task list is empty. " +
		"List the remaining tasks (completed tasks are kept for you), or continue with the current plan."

	// msgNotCurrentTask: complete_task for a task that is not the current
	// one. Args: the task id given, current task id, its description.
	msgNotCurrentTask = "complete_task rejected: task %d is not the current task. " +
		"Tasks are done in order; the current task is task %d: %s. " +
		"Complete it first, or call update_task_plan to change the plan."

	// msgNoPendingTask: complete_task when no task is pending. Args: the
	// task id given.
	msgNoPendingTask = "complete_task rejected: task %d is not pending; every task in the plan is done. " +
		"Give your final answer."

	// msgTaskCompleted: a task completed, another one is next. Args: task
	// id, completion, next task id, its description.
	msgTaskCompleted = "Task %d recorded as %s. Next is task %d: %s"

	// msgAllTasksCompleted: the last pending task completed. Args: task id,
	// completion.
	msgAllTasksCompleted = "Task %d recorded as %s. Every task in the plan is done: give your final answer."

	// msgTaskFailed: a task completed as failure; it stays the current task.
	// Args: task id.
	msgTaskFailed = "Task %d recorded as failure and is still the current task. " +
		"Try it another way, or call update_task_plan to replace it."

	// msgDepthLimit: a tool call that used up the current task's budget, and
	// every call after it for that task. Args: calls made for the task, task
	// id, the budget, task id.
	msgDepthLimit = "You have made %d tool calls for task %d (the limit is %d). Stop calling tools for it and either: " +
		"call complete_task for task %d with what you have (success, partial_success or failure, and a short summary), " +
		"or call update_task_plan to replace the remaining tasks."
)
