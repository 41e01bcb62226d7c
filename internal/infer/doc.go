// Package infer estimates the re-decisions of sessions that have no plan:
// points where the agent changed course, read from its sequence of tool
// calls alone. Its results are inferred, never counted: they do not enter
// replan_rate or avg_replans, and docs/inferred-replans.md says how well they
// match the explicit replans of sessions whose plan events were hidden.
//
// The rule (Rule.Infer, docs/inferred-replans.md): a re-decision is
// inferred at a call when the calls just before it are a streak of at least
// MinFailures failed calls in one tool family, and the call is in another
// family — the agent stopped trying that way and took another; at most Cap
// per session. A tool's family is what Families maps it to; a tool not in
// the map is a family of its own.
//
// The package imports only the standard library and internal/events.
package infer
