package export

import "github.com/evosignal/evosignal/internal/store"

// DefaultMemoryLimit is the DuckDB memory_limit an export runs under unless
// told otherwise (analyze export -memory-limit). An export is one
// partitioned COPY per table, each sorting the rows of its window (the
// whole table on a first run, then without the join with events: see
// tableQuery) and, on later runs, joining the typed tables to the events
// committed since. DuckDB's own default, 80 % of RAM, let the first export
// of a large database hold the table in memory. Under this limit the sorts
// spill to the temp directory, in a fraction of that memory and about the
// same time (BENCHMARKS.md, "Figures behind the defaults";
// docs/operations.md). Not every part spills (a join's build side, the
// Parquet writers' buffers): a -since/-until export of a large window,
// which joins, may need more.
const DefaultMemoryLimit = "640MiB"

// ReadOptions are the read-only open options of an export of a database:
// opts with DefaultMemoryLimit where it sets no limit.
func ReadOptions(opts store.ReadOptions) store.ReadOptions {
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return opts
}
