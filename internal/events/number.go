package events

import "math"

// maxInt is the largest integer the schema allows (2^53-1): every integer
// field round-trips through a float64 consumer.
const maxInt = 1<<53 - 1

// intClass says what a JSON number is, as an integer field sees it.
type intClass uint8

const (
	intNotInteger intClass = iota // not an integer
	intNegative                   // an integer below zero
	intTooLarge                   // an integer above maxInt
	intOK                         // an integer in [0, maxInt]
)

// classifyInt reads JSON number text (already checked against the grammar)
// the way the schema validator does: JSON Schema 2020-12 makes any number
// with a zero fractional part an integer (1.0, 1e2, 10E-1), and
// santhosh-tekuri/jsonschema decides that with math/big.Rat.SetString, which
// gives up on numbers whose exponent does not fit an int64 or whose decimal
// exponent (exponent minus fraction digits) is beyond ±1e6 unless the
// mantissa is zero. Such numbers count as not integers here too. canonical
// reports that s is the plain decimal form of v.
func classifyInt(s []byte) (v int64, c intClass, canonical bool) {
	i := 0
	neg := s[0] == '-'
	if neg {
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracEnd = i
	}
	var exp int64
	hasExp := i < len(s)
	if hasExp {
		i++ // e or E
		expNeg := false
		if s[i] == '+' || s[i] == '-' {
			expNeg = s[i] == '-'
			i++
		}
		for i < len(s)-1 && s[i] == '0' {
			i++
		}
		if len(s)-i > 19 {
			return 0, intNotInteger, false // strconv.ParseInt overflows
		}
		var u uint64
		for ; i < len(s); i++ {
			u = u*10 + uint64(s[i]-'0')
		}
		switch {
		case !expNeg && u > math.MaxInt64, expNeg && u > 1<<63:
			return 0, intNotInteger, false
		case expNeg:
			exp = int64(-u) // -2^63 wraps to itself, as in ParseInt
		default:
			exp = int64(u)
		}
	}

	// Locate the significant digits of the mantissa, int part then fraction.
	first, last := -1, -1 // positions in the concatenated digit string
	nInt := intEnd - intStart
	for j := intStart; j < intEnd; j++ {
		if s[j] != '0' {
			if first < 0 {
				first = j - intStart
			}
			last = j - intStart
		}
	}
	for j := fracStart; j < fracEnd; j++ {
		if s[j] != '0' {
			if first < 0 {
				first = nInt + j - fracStart
			}
			last = nInt + j - fracStart
		}
	}
	plain := !neg && fracEnd == fracStart && !hasExp
	if first < 0 { // zero
		return 0, intOK, plain && nInt == 1
	}
	nDigits := nInt + (fracEnd - fracStart)
	exp5 := exp + int64(-(fracEnd - fracStart)) // wraps like math/big
	n := exp5
	if n < 0 {
		n = -n
		if n < 0 {
			return 0, intNotInteger, false
		}
	}
	if n > 1e6 {
		return 0, intNotInteger, false
	}
	// value = sig × 10^e, sig the digits first..last.
	e := exp5 + int64(nDigits-1-last)
	if e < 0 {
		return 0, intNotInteger, false
	}
	if neg {
		return 0, intNegative, false
	}
	if int64(last-first+1)+e > 16 {
		return 0, intTooLarge, false
	}
	var u uint64
	for j := first; j <= last; j++ {
		var d byte
		if j < nInt {
			d = s[intStart+j]
		} else {
			d = s[fracStart+j-nInt]
		}
		u = u*10 + uint64(d-'0')
	}
	for ; e > 0; e-- {
		u *= 10
	}
	if u > maxInt {
		return 0, intTooLarge, false
	}
	return int64(u), intOK, plain
}
