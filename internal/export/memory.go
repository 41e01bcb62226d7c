package export

import "github.com/evosignal/evosignal/internal/store"

// DefaultMemoryLimit is the DuckDB memory_limit an export runs under unless
// told otherwise (analyze export -memory-limit). An export is one
// partitioned COPY per table, each sorting the rows of its window (the
// whole table on a first run) and, for the typed tables, joining them to
// the events committed in it. DuckDB's own default, 80 % of RAM, let the
// first export of 10M events hold the table in memory: 6.5–6.9 GiB of
// RSS. Under this limit the sorts spill to the temp directory: 0.9 GiB of
// RSS at 10M events, in about the same time (docs/operations.md). Not every
// part spills (the semi-join's build side of 10M events, the Parquet
// writers' buffers): at 512 MiB the first export of 10M synthetic events
// failed with an Out of Memory Error, and at 640 MiB the first export of
// the 10.5M events of scripts/bench-analyze (agentsim's sessions) did, in
// task_completions; at 1 GiB it took 32 s and 1.47 GiB of RSS
// (BENCHMARKS.md).
const DefaultMemoryLimit = "1GiB"

// ReadOptions are the read-only open options of an export of a database:
// opts with DefaultMemoryLimit where it sets no limit.
func ReadOptions(opts store.ReadOptions) store.ReadOptions {
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return opts
}
