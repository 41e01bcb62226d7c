package skilllite

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
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

var agentName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate reports what is wrong with c, naming the bridge's flags.
func (c Config) Validate() error {
	switch {
	case c.Agent == "":
		return errors.New("-agent is required")
	case !agentName.MatchString(c.Agent):
		return fmt.Errorf("-agent %q: want letters, digits, '_' or '-'", c.Agent)
	}
	var depth error
	if c.DepthLimit < 0 {
		depth = fmt.Errorf("-depth-limit %d: want a count ≥ 1 (0: the default, %d)", c.DepthLimit, DefaultDepthLimit)
	}
	return errors.Join(checkSource(c.Source, c.Agent), depth, c.files().Validate())
}

// checkSource reports whether source is a valid event source of agent.
func checkSource(source, agentName string) error {
	if a := events.AgentOf(source); a != agentName {
		return fmt.Errorf("-source %q: its first segment %q is not the -agent name %q", source, a, agentName)
	}
	_, err := events.New(source, "check", 1, events.SessionEnded, time.Now(), agent.SessionEnded{Outcome: events.OutcomeSuccess})
	if ee := (*events.Error)(nil); errors.As(err, &ee) {
		return fmt.Errorf("-source %q: %s", source, ee.Msg)
	}
	return err
}

// DefaultSource is the event source of agent bridged on this host:
// <agent>/bridge/<hostname>.
func DefaultSource(agent string) string {
	return agent + "/bridge/" + hostSegment()
}

// hostSegment is the host name as a source path segment: printable ASCII
// without '/' or spaces.
func hostSegment() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	h = strings.Map(func(r rune) rune {
		if r > ' ' && r <= '~' && r != '/' {
			return r
		}
		return '-'
	}, h)
	if len(h) > 128 {
		h = h[:128]
	}
	return h
}
