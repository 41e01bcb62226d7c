// Command ingest moves agent events from NATS JetStream into a DuckDB file.
//
// With no -nats URL it runs an embedded nats-server with JetStream, so
// `go run ./cmd/ingest` works on a fresh machine; agents in other processes
// publish to its -listen address. With -file it loads a JSON-lines file (or
// stdin with -file -) without NATS and exits.
//
// The same command is `evosignal ingest`; its code is in internal/app/ingest.
package main

import (
	"github.com/evosignal/evosignal/internal/app/ingest"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(ingest.Main) }
