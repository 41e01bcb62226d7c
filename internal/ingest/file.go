package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/evosignal/evosignal/internal/store"
)

// maxLine bounds one line of a JSON-lines file; a longer line is dead-lettered
// with its first maxLine bytes.
const maxLine = 64 << 20

// LoadFile loads a file of events, one JSON event a line, through the same
// validation, de-duplication and tables as the stream. Blank lines are
// skipped. name labels dead letters ("-" for stdin).
func (in *Ingester) LoadFile(ctx context.Context, r io.Reader, name string) (store.Result, error) {
	var total store.Result
	br := bufio.NewReaderSize(r, 1<<20)
	batch := make([]store.Item, 0, in.cfg.BatchSize)
	var line int64
	lastLog := time.Now()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Committed even when ctx is done (an orderly stop keeps what was
		// read). While the database fails for a reason of the environment
		// (disk full, out of memory) commitRetrying waits and retries;
		// stopped meanwhile, it returns the error and the lines of this
		// batch are not stored: loading the file again stores them (what is
		// stored already is skipped as duplicates).
		res, err := in.commitRetrying(ctx, store.Batch{Origin: store.FromFile, Items: batch})
		total.Add(res)
		if err != nil {
			return fmt.Errorf("load %s at line %d: %w", name, line, err)
		}
		in.stats.add(res, len(batch))
		batch = batch[:0]
		in.refreshFactsIfDue(ctx, true) // the rest of the file is a backlog
		if time.Since(lastLog) >= in.cfg.Progress {
			lastLog = time.Now()
			in.log.Info("loading", "file", name, "lines", line, "accepted", total.Accepted,
				"duplicates", total.Duplicates, "dead_letters", total.DeadLetters)
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return total, errors.Join(err, flush())
		}
		raw, truncated, err := readLine(br)
		if err == nil || len(raw) > 0 {
			line++
			if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 || truncated {
				it := classify(trimmed, "", in.cfg)
				if truncated && it.Dead == nil {
					it = store.Item{Raw: raw, Dead: &store.Dead{Code: ReasonOversize,
						Reason: fmt.Sprintf("line is longer than %d bytes", maxLine)}}
				}
				it.File, it.Line = name, line
				batch = append(batch, it)
				if len(batch) >= in.cfg.BatchSize {
					if err := flush(); err != nil {
						return total, err
					}
				}
			}
		}
		if err == io.EOF {
			err := flush()
			in.flushDeadLog()
			if err == nil {
				in.refreshFacts(ctx) // the file is loaded: store everything, however much
			}
			return total, err
		}
		if err != nil {
			return total, errors.Join(fmt.Errorf("read %s at line %d: %w", name, line+1, err), flush())
		}
	}
}

// readLine returns the next line without its newline. A line over maxLine is
// cut there (truncated true) and the rest of it skipped.
func readLine(br *bufio.Reader) (line []byte, truncated bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		} else if !truncated {
			line = append(line, chunk[:maxLine-len(line)]...)
			truncated = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return line, truncated, err
	}
}
