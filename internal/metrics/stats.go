package metrics

import (
	"math"
)

// Z95 is the normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Interval is a confidence interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Rate returns k/n, or nil when n is 0 (undefined, not zero).
func Rate(k, n int64) *float64 {
	if n <= 0 {
		return nil
	}
	r := float64(k) / float64(n)
	return &r
}

// Wilson returns the Wilson score interval for k successes in n trials at
// normal quantile z, or nil when n is 0. It behaves at the edges (k = 0,
// k = n, n = 1), unlike the Wald interval.
func Wilson(k, n int64, z float64) *Interval {
	if n <= 0 {
		return nil
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	den := 1 + z2/nf
	mid := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	iv := &Interval{Lo: math.Max(0, mid-half), Hi: math.Min(1, mid+half)}
	// Exact at the edges (the formula leaves rounding dust there).
	if k == 0 {
		iv.Lo = 0
	}
	if k == n {
		iv.Hi = 1
	}
	return iv
}

// NewcombeDiff returns Newcombe's hybrid score interval (method 10) for the
// difference p1 - p2 of two independent proportions k1/n1 and k2/n2, or nil
// when either n is 0.
func NewcombeDiff(k1, n1, k2, n2 int64, z float64) *Interval {
	w1, w2 := Wilson(k1, n1, z), Wilson(k2, n2, z)
	if w1 == nil || w2 == nil {
		return nil
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	d := p1 - p2
	lo := d - math.Sqrt((p1-w1.Lo)*(p1-w1.Lo)+(w2.Hi-p2)*(w2.Hi-p2))
	hi := d + math.Sqrt((w1.Hi-p1)*(w1.Hi-p1)+(p2-w2.Lo)*(p2-w2.Lo))
	return &Interval{Lo: math.Max(-1, lo), Hi: math.Min(1, hi)}
}

// Test names, as reported next to p-values.
const (
	TestFisher    = "fisher_exact"
	TestChiSquare = "chi_square_yates"
)

// ChiSquareMinExpected is the smallest expected cell count at which the 2×2
// test switches from Fisher's exact test to the chi-square test.
const ChiSquareMinExpected = 1000

// Test2x2 returns a two-sided p-value for the 2×2 table
//
//	a b   (group 1: failed, ok)
//	c d   (group 2: failed, ok)
//
// and the test used: Fisher's exact test while any expected cell count is
// below ChiSquareMinExpected, the chi-square test with Yates' correction
// above (where the two agree closely and Fisher's sum grows expensive).
// It returns (nil, "") for a table with an empty row or column.
func Test2x2(a, b, c, d int64) (*float64, string) {
	r1, r2, c1, c2 := a+b, c+d, a+c, b+d
	n := r1 + r2
	if r1 == 0 || r2 == 0 || c1 == 0 || c2 == 0 {
		return nil, ""
	}
	minExp := math.Min(math.Min(float64(r1)*float64(c1), float64(r1)*float64(c2)),
		math.Min(float64(r2)*float64(c1), float64(r2)*float64(c2))) / float64(n)
	if minExp >= ChiSquareMinExpected {
		p := chiSquareYates(a, b, c, d)
		return &p, TestChiSquare
	}
	p := fisherExact(a, b, c, d)
	return &p, TestFisher
}

// fisherExact is the two-sided Fisher exact test: the sum of the
// probabilities of all tables with the same margins that are no more likely
// than the observed one.
func fisherExact(a, b, c, d int64) float64 {
	r1, c1, n := a+b, a+c, a+b+c+d
	lo := max(0, c1-(n-r1))
	hi := min(r1, c1)
	logp := func(x int64) float64 {
		return lchoose(r1, x) + lchoose(n-r1, c1-x) - lchoose(n, c1)
	}
	obs := logp(a)
	const rel = 1e-7 // tables as likely as the observed one, up to rounding
	var p float64
	for x := lo; x <= hi; x++ {
		if lp := logp(x); lp <= obs+rel {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

func lchoose(n, k int64) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// chiSquareYates is Pearson's chi-square test with Yates' continuity
// correction for a 2×2 table (1 degree of freedom).
func chiSquareYates(a, b, c, d int64) float64 {
	fa, fb, fc, fd := float64(a), float64(b), float64(c), float64(d)
	n := fa + fb + fc + fd
	num := math.Abs(fa*fd-fb*fc) - n/2
	if num < 0 {
		num = 0
	}
	x2 := n * num * num / ((fa + fb) * (fc + fd) * (fa + fc) * (fb + fd))
	return math.Erfc(math.Sqrt(x2 / 2))
}

// Entropy returns the Shannon entropy in bits of the distribution counts.
func Entropy(counts []int64) float64 {
	var n float64
	for _, c := range counts {
		n += float64(c)
	}
	if n == 0 {
		return 0
	}
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// t975 are Student's t quantiles t(0.975, df) for df 1 to 30.
var t975 = [...]float64{12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
	2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
	2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
	2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
	2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
	2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456}

// T95 is Student's t quantile t(0.975, df): the factor of a two-sided 95%
// interval of a mean from df+1 observations. From a table (9 digits) up to
// df 30, then the Cornish-Fisher expansion around Z95, within 1e-5 of the
// exact value there and closer beyond. NaN for df < 1.
func T95(df int64) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df <= int64(len(t975)):
		return t975[df-1]
	}
	z, v := Z95, float64(df)
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v) + (3*z5*z*z+19*z5+17*z3-15*z)/(384*v*v*v)
}

// MeanCI is the 95% interval of a mean from n observations with sample
// standard deviation sd: mean ± T95(n−1)·sd/√n. nil when n < 2 or either
// value is unknown. It assumes independent observations (sessions, not the
// calls within one), and is approximate for skewed costs in small groups.
func MeanCI(mean, sd *float64, n int64) *Interval {
	if mean == nil || sd == nil || n < 2 {
		return nil
	}
	half := T95(n-1) * *sd / math.Sqrt(float64(n))
	return &Interval{Lo: *mean - half, Hi: *mean + half}
}
