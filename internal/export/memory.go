package export

import "github.com/evosignal/evosignal/internal/store"

// DefaultMemoryLimit is the DuckDB memory_limit an export runs under unless
// told otherwise (analyze export -memory-limit). An export is one
// partitioned COPY per table, each sorting the rows of its window (the
// whole table on a first run). DuckDB's own default, 80 % of RAM, let the
// first export of 10M events hold the table in memory: 6.5–6.9 GiB of
// RSS. Under this limit the sorts spill to the temp directory: about
// 0.8 GiB of RSS at 10M events, for about twice the time (BENCHMARKS.md).
// The Parquet writers' buffers do not spill; a limit far below this one
// fails on large tables.
const DefaultMemoryLimit = "512MiB"

// ReadOptions are the read-only open options of an export of a database:
// opts with DefaultMemoryLimit where it sets no limit.
func ReadOptions(opts store.ReadOptions) store.ReadOptions {
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return opts
}
