package export

import "github.com/evosignal/evosignal/internal/store"

// DefaultMemoryLimit is the DuckDB memory_limit an export runs under unless
// told otherwise (analyze export -memory-limit). An export is one
// partitioned COPY per table, each sorting the rows of its window (the
// whole table on a first run, then without the join with events: see
// tableQuery) and, on later runs, joining the typed tables to the events
// committed since. DuckDB's own default, 80 % of RAM, let the first export
// of 10M events hold the table in memory: 6.5–6.9 GiB of RSS. Under this
// limit the sorts spill to the temp directory: the first export of
// scripts/bench-analyze's 10.5M events took 0.92–0.95 GiB of RSS and 29–31 s
// (at 1 GiB: 1.35–1.7 GiB, 26 s; docs/operations.md, BENCHMARKS.md). Not
// every part spills (a join's build side, the Parquet writers' buffers): a
// -since/-until export of a large window, which joins, may need more.
const DefaultMemoryLimit = "640MiB"

// ReadOptions are the read-only open options of an export of a database:
// opts with DefaultMemoryLimit where it sets no limit.
func ReadOptions(opts store.ReadOptions) store.ReadOptions {
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return opts
}
