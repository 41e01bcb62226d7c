package inferbench

import (
	"fmt"
	"path/filepath"

	"github.com/evosignal/evosignal/internal/workshop/sim"
)

// Default seeds: tuning and report sets never share a seed.
var (
	DefaultTuneSeeds   = []uint64{1, 2, 3}
	DefaultReportSeeds = []uint64{101, 102, 103}
)

// DefaultScenarios returns the benchmark's scenarios; testdata is the
// repository's testdata directory. Tuned on: the default scenario, its
// variant with no retry before a change of tool, and testdata/agentsim
// minimal.json. Held out (never seen in tuning): testdata/agentsim
// two-agents.json, the default scenario with two retries, the default
// scenario with replans half as likely, and the SkillLite bridge fixtures
// (testdata/infer/skilllite_fixtures.jsonl).
func DefaultScenarios(testdata string) ([]Scenario, error) {
	variant := func(f func(*sim.Scenario)) (*sim.Scenario, error) {
		sc, err := sim.Parse(sim.DefaultJSON())
		if err != nil {
			return nil, err
		}
		f(sc)
		return sc, sc.Validate()
	}
	var out []Scenario
	add := func(name string, tune bool, sc *sim.Scenario, err error) error {
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		out = append(out, Scenario{Name: name, Sim: sc, Tune: tune})
		return nil
	}
	def, err := variant(func(*sim.Scenario) {})
	if err := add("default", true, def, err); err != nil {
		return nil, err
	}
	r0, err := variant(func(sc *sim.Scenario) { sc.Model.RetriesBeforeReplan = 0 })
	if err := add("default, no retry", true, r0, err); err != nil {
		return nil, err
	}
	minimal, err := sim.Load(filepath.Join(testdata, "agentsim", "minimal.json"))
	if err := add("minimal", true, minimal, err); err != nil {
		return nil, err
	}
	two, err := sim.Load(filepath.Join(testdata, "agentsim", "two-agents.json"))
	if err := add("two-agents", false, two, err); err != nil {
		return nil, err
	}
	r2, err := variant(func(sc *sim.Scenario) { sc.Model.RetriesBeforeReplan = 2 })
	if err := add("default, two retries", false, r2, err); err != nil {
		return nil, err
	}
	half, err := variant(func(sc *sim.Scenario) { sc.Model.Replan = 0.5 })
	if err := add("default, replan 0.5", false, half, err); err != nil {
		return nil, err
	}
	out = append(out, Scenario{Name: "skilllite fixtures", File: filepath.Join(testdata, "infer", "skilllite_fixtures.jsonl")})
	return out, nil
}
