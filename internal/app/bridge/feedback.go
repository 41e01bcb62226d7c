package bridge

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/evosignal/evosignal/internal/adapter/skilllite"
)

// reportFeedback writes the -feedback cross-check: a summary line and a line
// per matched turn whose counts differ on stderr, and the whole report as
// JSON to -feedback-report.
func reportFeedback(o *options, r skilllite.FeedbackReport, stderr io.Writer) error {
	fmt.Fprintf(stderr, "bridge: feedback.sqlite: %d decisions read; %d of %d turns with a tool call matched, %d of them with differing counts, %d unmatched\n",
		r.Decisions, len(r.Matched), r.Recorded, r.Differing, len(r.UnmatchedTurns))
	for _, m := range r.Matched {
		if len(m.Diffs) == 0 {
			continue
		}
		var ds []string
		for _, d := range m.Diffs {
			ds = append(ds, fmt.Sprintf("%s bridge %v skilllite %v", d.Field, d.Bridge, d.SkillLite))
		}
		fmt.Fprintf(stderr, "bridge: feedback.sqlite: turn ending at line %d (session %s) vs decision %d: %s\n",
			m.Turn.Line, m.Turn.Session, m.Decision.ID, strings.Join(ds, ", "))
	}
	if o.feedbackReport == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode feedback report: %w", err)
	}
	b = append(b, '\n')
	if o.feedbackReport == "-" {
		_, err = stderr.Write(b)
		return err
	}
	if err := os.WriteFile(o.feedbackReport, b, 0o644); err != nil {
		return fmt.Errorf("write feedback report: %w", err)
	}
	return nil
}
