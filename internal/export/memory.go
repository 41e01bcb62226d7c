package export

import "github.com/evosignal/evosignal/internal/store"

// DefaultMemoryLimit is the DuckDB memory_limit an export runs under unless
// told otherwise (analyze export -memory-limit). An export is one
// partitioned COPY per table, each sorting the rows of its window (the
// whole table on a first run); under the limit the sort spills to the temp
// directory instead of holding the table in memory. DuckDB's own default,
// 80 % of RAM, let the first export of 10M events take 6.9 GiB; at this
// limit it stays under 1 GiB of RSS (BENCHMARKS.md) and is no slower: the
// sort's runs are written once and merged, and the Parquet writer is the
// bottleneck either way.
const DefaultMemoryLimit = "512MiB"

// ReadOptions are the read-only open options of an export of a database:
// opts with DefaultMemoryLimit where it sets no limit.
func ReadOptions(opts store.ReadOptions) store.ReadOptions {
	if opts.MemoryLimit == "" {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	return opts
}
