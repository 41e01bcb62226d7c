package ruleset

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// TestAssign: the arm is a pure function of version, unit and share; its
// share over many units is the holdout's; and a few vectors, computed from
// the rule as written (for implementations in other languages), hold.
func TestAssign(t *testing.T) {
	const n = 200_000
	for _, share := range []float64{0.05, 0.1, 0.5} {
		held := 0
		for i := range n {
			if Assign("rs-3017c5f5c943", fmt.Sprint("session-", i), share) == ArmHoldout {
				held++
			}
		}
		got := float64(held) / n
		if sd := math.Sqrt(share * (1 - share) / n); math.Abs(got-share) > 5*sd {
			t.Errorf("holdout %v: %d of %d units held out (%.4f), more than 5 standard errors off", share, held, n, got)
		}
	}
	for _, c := range []struct {
		version, unit string
		holdout       float64
		want          string
	}{
		{"", "s-1", 0.5, ArmRules},
		{"rs-1", "s-1", 0, ArmRules},
	} {
		if got := Assign(c.version, c.unit, c.holdout); got != c.want {
			t.Errorf("Assign(%q, %q, %v) = %s, want %s", c.version, c.unit, c.holdout, got, c.want)
		}
	}
	// The rule itself, spelled out: u < holdout × 2^64.
	for _, unit := range []string{"ci-50118-holdout", "01a250dc-8473-7333-a196-ef6a529afc68", "workspace:/home/me/proj"} {
		h := sha256.Sum256([]byte("evosignal-holdout\x00rs-3017c5f5c943\x00" + unit))
		u := binary.BigEndian.Uint64(h[:8])
		for _, share := range []float64{0.1, 0.5} {
			want := ArmRules
			if float64(u) < share*math.Exp2(64) {
				want = ArmHoldout
			}
			if got := Assign("rs-3017c5f5c943", unit, share); got != want {
				t.Errorf("Assign(%q, %v) = %s, want %s (u = %d)", unit, share, got, want, u)
			}
		}
	}
	// A new version draws anew: about half the units change arm at 0.5.
	changed := 0
	for i := range 10_000 {
		u := fmt.Sprint("s-", i)
		if Assign("rs-a", u, 0.5) != Assign("rs-b", u, 0.5) {
			changed++
		}
	}
	if changed < 4500 || changed > 5500 {
		t.Errorf("%d of 10000 units changed arm between two versions, want about half", changed)
	}
}

func TestValidateHoldout(t *testing.T) {
	for _, h := range []float64{-0.1, 0.6, math.NaN()} {
		if err := (RuleSet{Holdout: h}).Validate(); err == nil {
			t.Errorf("holdout %v: no error", h)
		}
	}
	if err := (RuleSet{Holdout: 0.5}).Validate(); err != nil {
		t.Errorf("holdout 0.5: %v", err)
	}
}

// TestAssignRule: a rule's own arm is Assign over the version and rule id
// joined by a NUL byte; it is drawn independently of the set's arm and of
// the other rules' (the four combinations of two rules' arms each come up
// at their product share).
func TestAssignRule(t *testing.T) {
	if got, want := AssignRule("rs-1", "prefer:t:x", "s-9", 0.3), Assign("rs-1\x00prefer:t:x", "s-9", 0.3); got != want {
		t.Errorf("AssignRule = %s, want %s", got, want)
	}
	if got := AssignRule("rs-1", "", "s-9", 0.5); got != ArmRules {
		t.Errorf("AssignRule without a rule id = %s, want rules", got)
	}
	const n = 100_000
	var both, set int
	for i := range n {
		u := fmt.Sprint("session-", i)
		a, b := AssignRule("rs-1", "a", u, 0.5) == ArmHoldout, AssignRule("rs-1", "b", u, 0.5) == ArmHoldout
		if a && b {
			both++
		}
		if a && Assign("rs-1", u, 0.5) == ArmHoldout {
			set++
		}
	}
	for what, k := range map[string]int{"both rules held out": both, "rule and set held out": set} {
		if got, sd := float64(k)/n, math.Sqrt(0.25*0.75/n); math.Abs(got-0.25) > 5*sd {
			t.Errorf("%s in %.4f of units, want 0.25 (independent draws)", what, got)
		}
	}
}
