// Command validate checks JSON-lines files of events (or standard input)
// against the evosignal v1 contract, without NATS or a database, and lists
// every violation of every line.
//
// The same command is `evosignal validate`; its code is in internal/app/validate.
package main

import (
	"github.com/evosignal/evosignal/internal/app/validate"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(validate.Main) }
