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

func TestT95(t *testing.T) {
	// Exact quantiles (R: qt(0.975, df)).
	exact := map[int64]float64{1: 12.7062047, 5: 2.5705818, 10: 2.2281389, 11: 2.2009852, 15: 2.1314495, 31: 2.0395134, 40: 2.0210754,
		20: 2.0859634, 30: 2.0422725, 60: 2.0002978, 120: 1.9799304, 1000: 1.9623391}
	for df, want := range exact {
		if got := T95(df); math.Abs(got-want) > 1e-5 {
			t.Errorf("T95(%d) = %.7f, want %.7f", df, got, want)
		}
	}
	if !math.IsNaN(T95(0)) {
		t.Error("T95(0) is not NaN")
	}
}

func TestMeanCI(t *testing.T) {
	mean, sd := 10.0, 2.0
	iv := MeanCI(&mean, &sd, 4)
	half := 3.182446305 * 2 / 2
	if iv == nil || math.Abs(iv.Lo-(10-half)) > 1e-9 || math.Abs(iv.Hi-(10+half)) > 1e-9 {
		t.Errorf("MeanCI(10, 2, 4) = %+v, want 10 ± %v", iv, half)
	}
	if MeanCI(&mean, &sd, 1) != nil || MeanCI(nil, &sd, 5) != nil {
		t.Error("MeanCI with n 1 or no mean is not nil")
	}
}
