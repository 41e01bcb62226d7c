// Command analyze turns the event tables into evolution signals: replan
// statistics, hint-failure correlations, task-type → tool mappings, learned
// hint rules, rule effects and the evolution curve. Every number comes from
// one .sql file in queries/; `analyze <command> -h` explains each command.
//
// The same command is `evosignal analyze`; its code is in internal/app/analyze.
package main

import (
	"github.com/evosignal/evosignal/internal/app/analyze"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(analyze.Main) }
