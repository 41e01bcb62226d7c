// Package sqlservice answers read-only SQL over the ingester's DuckDB database:
// while the ingester holds the file, no other process can open it, so the
// ingester serves queries itself, over NATS.
//
//   - Service (Start) is a NATS micro service, evosignal-query, on one
//     subject. It answers a Request with an Arrow IPC stream cut into
//     messages under the server's max payload, with flow control, or with
//     one JSON message.
//   - The guard (guard.go, Lockdown) lets through exactly one SELECT
//     statement calling no table function outside an allow-list, runs it in
//     a transaction that is rolled back, and locks the database down: no
//     files, no extensions, no settings changes, for every connection.
//   - Client asks a service; Local answers from a database opened in this
//     process with the same checks. Both give a Result whose values are the
//     Go values database/sql gives when scanning DuckDB into any.
//   - WriteArrowFile and WriteParquet save a Result.
//
// docs/query-service.md specifies the protocol for clients in any language.
package sqlservice
