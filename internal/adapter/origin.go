package adapter

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/evosignal/evosignal/agent"
	"github.com/evosignal/evosignal/internal/events"
)

// Origin is who a bridged agent's events come from, for the adapters whose
// records do not say: the agent name (the first segment of the source, and
// the subject <prefix>.<name> the events go to), the source, and the model
// of sessions whose records name none.
type Origin struct {
	Agent  string
	Source string
	Model  string
	def    string // the agent name when -name is not given
}

// Flags declares -name (default agent), -source and -model on fs.
func (o *Origin) Flags(fs *flag.FlagSet, agent string) {
	o.def = agent
	fs.StringVar(&o.Model, "model", "unknown", "`model` of the sessions, unless their records name one")
	fs.StringVar(&o.Agent, "name", "", "agent `name` of the events (default the -agent value): the first segment of their source, and the subject <prefix>.<name>")
	fs.StringVar(&o.Source, "source", "", "event `source` (default <name>/bridge/<hostname>); its first segment must be the agent name")
}

var agentName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate reports what is wrong with o, naming the flags, and fills in the
// default source.
func (o *Origin) Validate() error {
	if o.Agent == "" {
		o.Agent = o.def
	}
	if o.Model == "" {
		return errors.New("-model is empty")
	}
	switch {
	case o.Agent == "":
		return errors.New("-name is empty")
	case !agentName.MatchString(o.Agent):
		return fmt.Errorf("-name %q: want letters, digits, '_' or '-'", o.Agent)
	}
	if o.Source == "" {
		o.Source = DefaultSource(o.Agent)
		return nil
	}
	if a := events.AgentOf(o.Source); a != o.Agent {
		return fmt.Errorf("-source %q: its first segment %q is not the agent name %q (-name)", o.Source, a, o.Agent)
	}
	_, err := events.New(o.Source, "check", 1, events.SessionEnded, time.Now(), agent.SessionEnded{Outcome: events.OutcomeSuccess})
	if ee := (*events.Error)(nil); errors.As(err, &ee) {
		return fmt.Errorf("-source %q: %s", o.Source, ee.Msg)
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
