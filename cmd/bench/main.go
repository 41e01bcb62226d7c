// Command bench measures the ingest pipeline on the embedded defaults (internal/workshop/bench) and
// prints its figures and peak memory: the ceilings of its parts (raw
// JetStream publish and consume, raw DuckDB append), the end-to-end rate of
// the real ingester, the cost of de-duplication, and the peak RSS of each
// phase. See `bench -h`.
//
// The same command is `evosignal bench`; its code is in internal/app/bench.
package main

import (
	"github.com/evosignal/evosignal/internal/app/bench"
	"github.com/evosignal/evosignal/internal/cli"
)

func main() { cli.Main(bench.Main) }
