// Package registry is the list of the adapters `evosignal bridge` knows:
// adding an adapter is one line here (docs/architecture.md, "An agent
// adapter").
package registry

import (
	"github.com/evosignal/evosignal/internal/adapter"
	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/adapter/codex"
	"github.com/evosignal/evosignal/internal/adapter/cursor"
	"github.com/evosignal/evosignal/internal/adapter/otel"
	"github.com/evosignal/evosignal/internal/adapter/skilllite"
	"github.com/evosignal/evosignal/internal/adapter/skilllite/feedbackdb"
)

// All returns a new value of every adapter, in the order bridge -h lists
// them. Each value serves one run (its flags bind to it).
func All() []adapter.Adapter {
	return []adapter.Adapter{
		skilllite.NewAdapter(feedbackdb.ReadDecisions),
		otel.Adapter{},
		claudecode.NewAdapter(),
		cursor.NewAdapter(),
		codex.NewAdapter(),
	}
}
