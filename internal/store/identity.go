package store

import (
	"context"
	"fmt"

	"github.com/evosignal/evosignal/queries"
)

// Identity returns the database's id: a random UUID made when the database
// was created (or first opened after the upgrade that introduced it) and
// never changed. Two files hold the same id only if one is a copy of the
// other.
func (s *Store) Identity(ctx context.Context) (string, error) {
	var id string
	if err := s.db.QueryRowContext(ctx, queries.MustRead("ingest/load_identity.sql")).Scan(&id); err != nil {
		return "", fmt.Errorf("read the database identity of %s: %w", s.path, err)
	}
	return id, nil
}
