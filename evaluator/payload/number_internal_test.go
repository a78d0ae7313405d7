package payload

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestOverflowBound(t *testing.T) {
	two := big.NewInt(2)
	want := new(big.Int).Sub(new(big.Int).Exp(two, big.NewInt(1024), nil), new(big.Int).Exp(two, big.NewInt(970), nil))
	if overflowBound != want.String() {
		t.Fatalf("overflowBound is not 2^1024-2^970")
	}
}

// genJSONNumber draws a JSON number: random digits, point and exponent,
// often built around the overflow bound's digits and decade.
func genJSONNumber() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		var digits string
		if rapid.Bool().Draw(t, "nearBound") {
			n := rapid.IntRange(1, len(overflowBound)+5).Draw(t, "n")
			b := []byte(overflowBound + "00000")[:n]
			if rapid.Bool().Draw(t, "perturb") {
				k := rapid.IntRange(0, n-1).Draw(t, "at")
				b[k] = byte(rapid.IntRange('0', '9').Draw(t, "digit"))
			}
			digits = string(b)
		} else {
			digits = rapid.StringMatching(`[0-9]{1,40}`).Draw(t, "digits")
		}
		digits = strings.Repeat("0", rapid.IntRange(0, 3).Draw(t, "zeros")) + digits
		point := rapid.IntRange(0, len(digits)).Draw(t, "point")
		whole, frac := digits[:point], digits[point:]
		whole = strings.TrimLeft(whole, "0")
		if whole == "" {
			whole = "0"
		}
		s := whole
		if frac != "" {
			s += "." + frac
		}
		if rapid.Bool().Draw(t, "minus") {
			s = "-" + s
		}
		if rapid.Bool().Draw(t, "hasExp") {
			e := rapid.IntRange(-700, 700).Draw(t, "exp")
			if rapid.Bool().Draw(t, "aimAtBound") {
				e = 309 - len(whole) + rapid.IntRange(-1, 1).Draw(t, "off")
			}
			s += rapid.SampledFrom([]string{"e", "E"}).Draw(t, "e") + strconv.Itoa(e)
		}
		return s
	})
}

// TestNumberMatchesParseFloat: scanNumber consumes exactly a JSON number,
// its fast path is bit for bit strconv's, and overflows is strconv's range
// error.
func TestNumberMatchesParseFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(genJSONNumber(), rapid.Custom(func(t *rapid.T) string {
			x := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				x = 0
			}
			f := rapid.SampledFrom([]byte{'e', 'E', 'f', 'g'}).Draw(t, "fmt")
			return strconv.FormatFloat(x, f, rapid.IntRange(-1, 25).Draw(t, "prec"), 64)
		})).Draw(t, "number")
		want, err := strconv.ParseFloat(s, 64)
		end, x, exact := scanNumber([]byte(s+","), 0)
		if end != len(s) {
			t.Fatalf("scanNumber(%s) ended at %d", s, end)
		}
		if exact && math.Float64bits(x) != math.Float64bits(want) {
			t.Fatalf("scanNumber(%s) = %v, ParseFloat %v", s, x, want)
		}
		if got := overflows([]byte(s)); got != (err != nil) {
			t.Fatalf("overflows(%s) = %v, ParseFloat error %v", s, got, err)
		}
		if got, ok := parseNumber([]byte(s)); ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseNumber(%s) = %v, %v; ParseFloat %v, %v", s, got, ok, want, err)
		}
	})
}

// oldStampNs is stampNs as first written, with math.Trunc: the reference
// for the faster version.
func oldStampNs(x float64, unit int64) int64 {
	w := math.Trunc(x)
	if w > float64(math.MaxInt64/unit) {
		return math.MaxInt64
	}
	if w < float64(math.MinInt64/unit) {
		return math.MinInt64
	}
	ns := int64(w) * unit
	frac := int64(math.Round((x - w) * float64(unit)))
	if frac > 0 && ns > math.MaxInt64-frac {
		return math.MaxInt64
	}
	if frac < 0 && ns < math.MinInt64-frac {
		return math.MinInt64
	}
	return ns + frac
}

func TestStampNsMatchesTrunc(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		unit := rapid.SampledFrom([]int64{1e6, 1e9}).Draw(t, "unit")
		limit := float64(math.MaxInt64 / unit)
		x := rapid.OneOf(
			rapid.Float64(),
			rapid.Float64Range(-2*limit, 2*limit),
			rapid.Float64Range(limit-2, limit+2),
			rapid.Float64Range(-limit-2, -limit+2),
			rapid.Map(rapid.Int64Range(-1e13, 1e13), func(n int64) float64 { return float64(n) }),
		).Draw(t, "x")
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return // Decode never passes these
		}
		if got, want := stampNs(x, unit), oldStampNs(x, unit); got != want {
			t.Fatalf("stampNs(%v, %d) = %d, want %d", x, unit, got, want)
		}
	})
}
