package sqlservice

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/internal/metrics"
)

// Source is a metrics.Source answered by a query service: the analyzers
// run the same SQL and get the same Go values as metrics.DB gives them from
// the database file.
type Source struct{ Client *Client }

var _ metrics.Source = Source{}

// Query runs q through the service. A result the service cut off at its row
// limit is an error: an analysis of part of the rows would be wrong.
func (s Source) Query(ctx context.Context, q string, args ...any) (*metrics.Table, error) {
	req, err := NewRequest(q, args...)
	if err != nil {
		return nil, err
	}
	res, err := s.Client.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Truncated {
		return nil, fmt.Errorf("the query service cut the result off at %d rows (its -query-max-rows); an analysis needs them all", len(res.Rows))
	}
	return &metrics.Table{Columns: res.Columns, Rows: res.Rows}, nil
}
