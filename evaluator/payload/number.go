package payload

import (
	"strconv"
	"unsafe"
)

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scanNumber validates the number at data[i], a '-' or a digit, and
// returns the index past it. Whatever follows is the caller's to judge:
// "1.2.3" ends after "1.2". For the numbers trackers send it also returns
// the value, exact says so, saving a second pass: when the digits form an
// integer m below 2^53 and the number is m × 10^e with |e| <= 22, both m
// and 10^|e| are exact float64s, so one IEEE multiplication or division
// rounds correctly (Clinger's fast path, and strconv's first resort too,
// so the result is bit for bit ParseFloat's).
func scanNumber(data []byte, i int) (end int, x float64, exact bool) {
	neg := data[i] == '-'
	if neg {
		i++
	}
	var m uint64 // wraps past 19 digits; nd then rules it out
	d := i
	for ; i < len(data) && isDigit(data[i]); i++ {
		m = m*10 + uint64(data[i]-'0')
	}
	nd := i - d
	if nd == 0 || nd > 1 && data[d] == '0' { // JSON has no leading zeros
		return -1, 0, false
	}
	exp := 0
	if i < len(data) && data[i] == '.' {
		i++
		d = i
		for ; i < len(data) && isDigit(data[i]); i++ {
			m = m*10 + uint64(data[i]-'0')
		}
		if i == d {
			return -1, 0, false
		}
		nd += i - d
		exp = d - i
	}
	if i < len(data) && data[i]|0x20 == 'e' { // 'e' or 'E'
		i++
		eneg := i < len(data) && data[i] == '-'
		if eneg || i < len(data) && data[i] == '+' {
			i++
		}
		d = i
		e := 0
		for ; i < len(data) && isDigit(data[i]); i++ {
			if e < 1e4 { // saturate: far outside the fast path either way
				e = e*10 + int(data[i]-'0')
			}
		}
		if i == d {
			return -1, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if nd > 19 || m>>53 != 0 || exp < -22 || exp > 22 {
		return i, 0, false
	}
	x = float64(m)
	if exp >= 0 {
		x *= pow10[exp]
	} else {
		x /= pow10[-exp]
	}
	if neg {
		x = -x
	}
	return i, x, true
}

// parseNumber returns the float64 nearest the validated JSON number v,
// exactly as strconv.ParseFloat rounds it (encoding/json's choice, and
// what an encoder's output must read back as), or false when it overflows
// float64. Underflow is no failure: it reads as a harmless 0.
func parseNumber(v []byte) (float64, bool) {
	// strconv reports overflow with an allocated *NumError, so it only
	// sees numbers that are known to fit.
	if overflows(v) {
		return 0, false
	}
	// The string aliases v only for the call; ParseFloat keeps nothing.
	x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(v), len(v)), 64)
	return x, err == nil
}

// overflowBound is 2^1024 - 2^970 in decimal: halfway between MaxFloat64
// and 2^1024, where a tie rounds to the even 2^1024, so a number whose
// magnitude reaches it rounds to infinity.
const overflowBound = "179769313486231580793728971405303415079934132710037826936173" +
	"778980444968292764750946649017977587207096330286416692887910" +
	"946555547851940402630657488671505820681908902000708383676273" +
	"854845817711531764475730270069855571366959622842914819860834" +
	"936475292719074168444365510704342711559699508093042880177904" +
	"174497792"

// overflows reports whether the validated JSON number v rounds beyond
// float64. Writing |v| as 0.d1d2... × 10^e with d1 nonzero, e settles it
// unless e is 309 (len(overflowBound)), the bound's own decade; then the
// digits decide.
func overflows(v []byte) bool {
	i := 0
	if v[0] == '-' {
		i = 1
	}
	intEnd := skipDigits(v, i)
	fracStart, fracEnd := intEnd, intEnd
	if intEnd < len(v) && v[intEnd] == '.' {
		fracStart = intEnd + 1
		fracEnd = skipDigits(v, fracStart)
	}
	exp := 0
	if fracEnd < len(v) { // an exponent: 'e' or 'E', a sign maybe, digits
		j, neg := fracEnd+1, false
		if v[j] == '+' || v[j] == '-' {
			neg = v[j] == '-'
			j++
		}
		for ; j < len(v); j++ {
			if exp < 1e6 { // saturate: far past either end of float64 anyway
				exp = exp*10 + int(v[j]-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	first, e := i, intEnd-i+exp // first significant digit, decimal exponent
	// JSON has no leading zeros, so a leading 0 is the whole integer part.
	if v[i] == '0' {
		for first = fracStart; first < fracEnd && v[first] == '0'; first++ {
		}
		if first == fracEnd {
			return false // zero
		}
		e = exp - (first - fracStart)
	}
	switch {
	case e < len(overflowBound):
		return false
	case e > len(overflowBound):
		return true
	}
	k := 0
	for j := first; j < fracEnd; j++ {
		switch {
		case j == intEnd: // the decimal point
		case k == len(overflowBound):
			if v[j] != '0' {
				return true
			}
		case v[j] != overflowBound[k]:
			return v[j] > overflowBound[k]
		default:
			k++
		}
	}
	// A proper prefix of the bound is below it, as the bound does not end
	// in zeros; equal to it rounds to infinity.
	return k == len(overflowBound)
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}
