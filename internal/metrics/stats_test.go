package metrics

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Reference values from R: binom::binom.wilson, fisher.test,
// chisq.test(correct = TRUE).
func TestWilson(t *testing.T) {
	tests := []struct {
		name   string
		k, n   int64
		lo, hi float64
	}{
		{"half", 5, 10, 0.2365931, 0.7634069},
		{"zero of ten", 0, 10, 0, 0.2775328},
		{"all of ten", 10, 10, 0.7224672, 1},
		{"one of one", 1, 1, 0.2065493, 1},
		{"large", 300, 1000, 0.272407, 0.329124}, // by hand from the formula
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Wilson(tt.k, tt.n, Z95)
			if got == nil || !near(got.Lo, tt.lo, 2e-6) || !near(got.Hi, tt.hi, 2e-6) {
				t.Fatalf("Wilson(%d, %d) = %+v, want [%v, %v]", tt.k, tt.n, got, tt.lo, tt.hi)
			}
		})
	}
	if Wilson(0, 0, Z95) != nil {
		t.Fatal("Wilson(0, 0) is defined, want nil")
	}
}

func TestTest2x2(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int64
		p          float64
		test       string
	}{
		{"tea tasting", 3, 1, 1, 3, 0.4857143, TestFisher},
		{"strong", 10, 0, 0, 10, 1.082509e-05, TestFisher},
		{"no difference", 5, 5, 5, 5, 1, TestFisher},
		{"large", 3000, 7000, 2500, 7500, 2.5e-14, TestChiSquare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, test := Test2x2(tt.a, tt.b, tt.c, tt.d)
			if p == nil || test != tt.test || !near(*p, tt.p, math.Max(1e-6, tt.p*0.05)) {
				t.Fatalf("Test2x2 = %v %s, want %v %s", deref(p), test, tt.p, tt.test)
			}
		})
	}
	if p, _ := Test2x2(0, 0, 3, 4); p != nil {
		t.Fatal("Test2x2 with an empty row is defined, want nil")
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestNewcombeDiff(t *testing.T) {
	// Newcombe (1998) example: 56/70 vs 48/80 → [0.0524, 0.3339].
	got := NewcombeDiff(56, 70, 48, 80, Z95)
	if got == nil || !near(got.Lo, 0.0524, 5e-4) || !near(got.Hi, 0.3339, 5e-4) {
		t.Fatalf("NewcombeDiff = %+v, want [0.0524, 0.3339]", got)
	}
}

func TestEntropy(t *testing.T) {
	if got := Entropy([]int64{5, 5}); !near(got, 1, 1e-12) {
		t.Fatalf("Entropy(5,5) = %v, want 1", got)
	}
	if got := Entropy([]int64{7, 0}); got != 0 {
		t.Fatalf("Entropy(7,0) = %v, want 0", got)
	}
}
