package skilllite

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evosignal/evosignal/agent/ruleset"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/taxonomy"
)

// SkillLite reads one planning_rules.json per workspace, so it cannot hold
// out single sessions: the workspace is the unit of a randomised holdout
// (schema/README.md, "Randomised holdouts"). `analyze rules -workspace DIR`
// draws the workspace's arm (ruleset.Draw, with the workspace's id), writes
// the rules it applies (none in the holdout arm) to WorkspaceRulesFile, and
// records the draw in AssignmentFile; the bridge (-workspace DIR) stamps
// every session it translates with it, so that the analyzer can compare
// the arms (their unit is the workspace: its sessions count as one).

// AssignmentFile is where evosignal records a workspace's arm, beside the
// rules SkillLite reads.
func AssignmentFile(workspace string) string {
	return filepath.Join(workspace, ".skilllite", "evosignal_assignment.json")
}

// WorkspaceAssignment is the content of AssignmentFile: the rule set
// version and rule ids the workspace applies (none in the holdout arm), and
// the assignment each session started there reports.
type WorkspaceAssignment struct {
	Ruleset    string            `json:"ruleset,omitempty"`
	Rules      []string          `json:"rules,omitempty"`
	Assignment events.Assignment `json:"assignment"`
}

// DrawWorkspace draws the workspace with id unitID under rs: the rules to
// write for SkillLite, and the assignment to record; nil when rs has no
// holdout (the workspace applies rs whole, and reports no assignment).
// The ids recorded are those of the SkillLite rules written.
func DrawWorkspace(rs ruleset.RuleSet, unitID string, tax *taxonomy.Taxonomy) (ruleset.RuleSet, *WorkspaceAssignment) {
	if rs.Version == "" || !(rs.Holdout > 0) {
		return rs, nil
	}
	d := ruleset.Draw(rs, unitID)
	wa := &WorkspaceAssignment{Assignment: events.Assignment{Ruleset: rs.Version, Arm: events.Arm(d.Arm), Holdout: rs.Holdout,
		Unit: events.UnitWorkspace, UnitID: unitID}}
	for _, r := range d.Rules {
		wa.Assignment.Rules = append(wa.Assignment.Rules, events.RuleArm{ID: r.ID, Arm: events.Arm(r.Arm), Holdout: r.Holdout})
	}
	if d.Arm == ruleset.ArmRules {
		wa.Ruleset = rs.Version
		for _, r := range Rules(&d.Applied, tax).Rules {
			wa.Rules = append(wa.Rules, r.ID)
		}
	}
	return d.Applied, wa
}

// WriteAssignment writes wa to the workspace's AssignmentFile (beside it
// and renamed, so that a reader never sees half of it); nil removes the
// file.
func WriteAssignment(workspace string, wa *WorkspaceAssignment) error {
	path := AssignmentFile(workspace)
	if wa == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("workspace assignment: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(wa, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("workspace assignment: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("workspace assignment: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("workspace assignment: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("workspace assignment: %w", err)
	}
	return nil
}

// ReadAssignment reads the workspace's AssignmentFile: nil when there is
// none. An assignment that does not pass the contract is an error.
func ReadAssignment(workspace string) (*WorkspaceAssignment, error) {
	path := AssignmentFile(workspace)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace assignment: %w", err)
	}
	var wa WorkspaceAssignment
	if err := json.Unmarshal(b, &wa); err != nil {
		return nil, fmt.Errorf("workspace assignment %s: %w", path, err)
	}
	a := wa.Assignment
	if a.Ruleset == "" || a.Unit != events.UnitWorkspace || a.UnitID == "" || (a.Arm != events.ArmRules && a.Arm != events.ArmHoldout) ||
		!(a.Holdout > 0 && a.Holdout <= ruleset.MaxHoldout) || (a.Arm == events.ArmHoldout && (wa.Ruleset != "" || len(wa.Rules) > 0)) {
		return nil, fmt.Errorf("workspace assignment %s: not a workspace's arm of a rule set's holdout: %s", path, b)
	}
	return &wa, nil
}
