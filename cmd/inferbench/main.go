// Command inferbench measures how well implicit re-decisions, inferred from
// tool calls alone (internal/infer), match the explicit replans of sessions
// whose plan events are hidden: it tunes the rule on one set of seeds and
// scenarios and prints precision and recall per scenario on another.
// docs/inferred-replans.md holds its figures.
//
//	go run ./cmd/inferbench
//	go run ./cmd/inferbench -json
//
// The same command is `evosignal inferbench`; its code is in internal/app/inferbench.
package main

import (
	"github.com/evosignal/evosignal/internal/app/inferbench"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(inferbench.Main) }
