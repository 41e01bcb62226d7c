package skilllite

import (
	"errors"
	"fmt"

	"github.com/evosignal/evosignal/internal/plandialect"
)

// Config says who the events of a Translator come from.
type Config struct {
	Agent        string // agent name, the first segment of Source
	Source       string
	AgentVersion string
	Model        string   // unless the request names one
	Tools        []string // announced in every session, before the names seen
	// DepthLimit is SkillLite's max_tool_calls_per_task: executed calls on
	// one task after which it tells the model so
	// (skilllite-agent/src/types/config.rs:73); 0 means DefaultDepthLimit.
	DepthLimit int64
	// Transcripts, when not nil, give tool_call and tool_result lines
	// without a timestamp the times SkillLite's transcripts hold for them,
	// and results their elapsed_ms (see transcripts.go).
	Transcripts *Transcripts
	// OnTurn, when not nil, gets the figures of every turn that ended with
	// a done line, plain answers included, as the turn ends: for the
	// cross-check with SkillLite's feedback.sqlite (CrossCheck).
	OnTurn func(TurnCounts)
	// Files are the plan files and the file tools whose calls are plan
	// operations (docs/plan-dialects.md, "Markdown plan files"); the zero
	// value is plandialect.DefaultFilesConfig, which has SkillLite's
	// write_file, search_replace and insert_lines.
	Files plandialect.FilesConfig
	// MaxRecord bounds an input line's bytes (records.DefaultMax when not
	// positive); a longer one is skipped as malformed.
	MaxRecord int
	// Workspace, when set, is the SkillLite workspace the sessions run in:
	// each session's start reports the arm recorded in its
	// AssignmentFile (read anew for every session; none when absent), with
	// the rule set and rules the workspace applies.
	Workspace string
}

// files returns c.Files, or the defaults for the zero value.
func (c Config) files() plandialect.FilesConfig {
	if len(c.Files.Patterns) == 0 && len(c.Files.Tools) == 0 {
		return plandialect.DefaultFilesConfig()
	}
	return c.Files
}

// DefaultDepthLimit is SkillLite's default max_tool_calls_per_task.
const DefaultDepthLimit = 15

// Validate reports what is wrong with c, naming the bridge's flags; who the
// events come from (Agent, Source) is adapter.Origin's to check.
func (c Config) Validate() error {
	var depth error
	if c.DepthLimit < 0 {
		depth = fmt.Errorf("-depth-limit %d: want a count ≥ 1 (0: the default, %d)", c.DepthLimit, DefaultDepthLimit)
	}
	return errors.Join(depth, c.files().Validate())
}
