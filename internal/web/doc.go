// Package web serves the live pages of evosignal: the overview (the
// report's headline figures and evolution curve, updated as events
// arrive), the session list, one page per session (its plan versions side
// by side, its tool calls on a timeline, its replans, rules and raw
// events) and the analyzers' tables. The ingester serves them on its
// -http listener, `analyze report -serve` over a database file.
//
// Every page reads through one sqlservice.Querier, the query service's
// guarded read path (one SELECT, rolled back, on a locked-down database),
// never a writable connection. Every figure comes from an analyzer of
// internal/metrics (through internal/report for the headline and the
// curve); the pages' own queries (queries/web/*.sql) only look rows up for
// display. Pages are html/template, styled by embedded CSS, with one
// embedded script of our own for the live updates; every response forbids
// inline script (Content-Security-Policy). docs/page.md describes them.
package web
