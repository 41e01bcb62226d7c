// Command evosignal is every evosignal command in one binary:
//
//	evosignal ingest     move agent events from NATS JetStream into DuckDB
//	evosignal analyze    evolution signals, learned rules, exports, reports
//	evosignal validate   check events against the contract
//	evosignal bridge     foreign agent formats into events
//	evosignal demo       the closed loop on the embedded defaults
//	…
//
// `evosignal -h` lists them all. Install it with
//
//	go install github.com/evosignal/evosignal/cmd/evosignal@latest
//
// or `go install ./cmd/evosignal` in a clone. Its code is in internal/app.
package main

import (
	"github.com/evosignal/evosignal/internal/app"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(app.Main) }
