package payload_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// float64OverflowBound is 2^1024 - 2^970 in decimal, halfway between
// MaxFloat64 and 2^1024: the smallest magnitude that rounds to infinity.
var float64OverflowBound = new(big.Int).Sub(
	new(big.Int).Lsh(big.NewInt(1), 1024), new(big.Int).Lsh(big.NewInt(1), 970)).String()

// belowOverflowBound is the bound's decimal with its last digit lowered:
// the largest 309-digit integer that still rounds to MaxFloat64.
func belowOverflowBound() string {
	b := []byte(float64OverflowBound)
	b[len(b)-1]--
	return string(b)
}

// scannerCases pin the corners of the hand-written scanner: the JSON
// grammar at its edges, key matching with and without escapes, nesting at
// the limit and numbers off the fast path.
var scannerCases = []decodeCase{
	// Grammar.
	{"scanner: unknown values of every type, nested, are skipped", payload.Canonical,
		`{"a":{"b":[1,-2.5e+3,"s",true,false,null,{},[],{"c":[{}]}]},"lat":1,"lon":2,"z":[]}`, pos(1, 2), nil},
	{"scanner: whitespace around every token", payload.Canonical,
		"\t{ \"x\" : [ 1 , { \"y\" : null } ] , \"lat\"\n:\r1 , \"lon\" : 2 }\n", pos(1, 2), nil},
	{"scanner: empty key", payload.Canonical, `{"":1,"lat":1,"lon":2}`, pos(1, 2), nil},
	{"scanner: invalid UTF-8 and lone surrogates pass, as in encoding/json", payload.Canonical,
		"{\"n\xff\":\"\xc3\x28\\ud800\",\"lat\":1,\"lon\":2}", pos(1, 2), nil},
	{"scanner: every escape in an unknown string", payload.Canonical,
		`{"n":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00\uABCD","lat":1,"lon":2}`, pos(1, 2), nil},
	{"scanner: trailing comma in an object: NotJSON", payload.Auto, `{"lat":1,"lon":2,}`, payload.Position{}, payload.NotJSON},
	{"scanner: trailing comma in a nested array: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":[1,]}`, payload.Position{}, payload.NotJSON},
	{"scanner: leading comma: NotJSON", payload.Auto, `{,"lat":1,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: missing colon: NotJSON", payload.Auto, `{"lat" 1,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: missing comma: NotJSON", payload.Auto, `{"lat":1 "lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: mismatched closer: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":[1}}`, payload.Position{}, payload.NotJSON},
	{"scanner: mismatched closer deep inside: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":{"a":[{"b":1]]}}`, payload.Position{}, payload.NotJSON},
	{"scanner: non-string key in a nested object: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":{1:2}}`, payload.Position{}, payload.NotJSON},
	{"scanner: non-string key: NotJSON", payload.Auto, `{lat:1,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: truncated literal: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":tru}`, payload.Position{}, payload.NotJSON},
	{"scanner: capitalised literal: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":True}`, payload.Position{}, payload.NotJSON},
	{"scanner: short unicode escape: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":"\u12G4"}`, payload.Position{}, payload.NotJSON},
	{"scanner: unicode escape cut by the end: NotJSON", payload.Auto, `"\u12`, payload.Position{}, payload.NotJSON},
	{"scanner: unterminated string: NotJSON", payload.Auto, `{"lat":1,"lon":2,"x":"abc`, payload.Position{}, payload.NotJSON},
	{"scanner: backslash at the end: NotJSON", payload.Auto, `"abc\`, payload.Position{}, payload.NotJSON},
	{"scanner: number without fraction digits: NotJSON", payload.Auto, `{"lat":1.,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: number without exponent digits: NotJSON", payload.Auto, `{"lat":1e+,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: lone minus: NotJSON", payload.Auto, `{"lat":-,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: minus before a leading zero: NotJSON", payload.Auto, `{"lat":-01,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: hex number: NotJSON", payload.Auto, `{"lat":0x1,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"scanner: form feed is not JSON whitespace: NotJSON", payload.Auto, "{\"lat\":1,\"lon\":2}\f", payload.Position{}, payload.NotJSON},
	{"scanner: byte order mark: NotJSON", payload.Auto, "\xef\xbb\xbf{\"lat\":1,\"lon\":2}", payload.Position{}, payload.NotJSON},
	{"scanner: bad array at the top: NotJSON before NotObject", payload.Auto, `[1,2,]`, payload.Position{}, payload.NotJSON},
	{"scanner: literal at the top: NotObject", payload.Auto, ` true `, payload.Position{}, payload.NotObject},
	{"scanner: nested 300 deep, the limit: accepted", payload.Canonical,
		`{"lat":1,"lon":2,"x":` + strings.Repeat("[", 299) + strings.Repeat("]", 299) + `}`, pos(1, 2), nil},
	{"scanner: objects nested 301 deep: NotJSON", payload.Canonical,
		`{"lat":1,"lon":2,"x":` + strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat("}", 300) + `}`, payload.Position{}, payload.NotJSON},
	{"scanner: array 300 deep at the top: NotObject", payload.Auto,
		strings.Repeat("[", 300) + strings.Repeat("]", 300), payload.Position{}, payload.NotObject},
	{"scanner: array 301 deep at the top: NotJSON", payload.Auto,
		strings.Repeat("[", 301) + strings.Repeat("]", 301), payload.Position{}, payload.NotJSON},

	// Keys.
	{"scanner: keys at the very end take the slow path: decoded", payload.Canonical,
		`{"lon":2,"lat":1}`, pos(1, 2), nil},
	{"scanner: all-escaped keys with upper-case hex", payload.Canonical,
		`{"\u006C\u0061\u0074":1,"\u006c\u006f\u006e":2,"\u0061\u0063\u0063":3,"\u0074\u0073":4}`,
		withAcc(withTs(pos(1, 2), 4e6), 3), nil},
	{"scanner: all-escaped _type and tst", payload.Auto,
		`{"\u005f\u0074\u0079\u0070\u0065":"location","lat":1,"lon":2,"\u0074\u0073\u0074":4}`,
		withTs(pos(1, 2), 4e9), nil},
	{"scanner: escaped backslash is not an escape to decode twice", payload.Canonical,
		`{"lat":1,"lon":2,"\\u0074s":1}`, pos(1, 2), nil},
	{"scanner: escaped key with a prefix is another key", payload.Canonical,
		`{"lat":1,"lon":2,"x\u0074s":1,"\u0074sx":1}`, pos(1, 2), nil},
	{"scanner: key differing in case is another key", payload.Canonical,
		`{"lat":1,"lon":2,"Lat":"x","LAT":1}`, pos(1, 2), nil},
	{"scanner: key with a NUL escape is another key", payload.Canonical,
		`{"lat":1,"lon":2,"ts\u0000":"x"}`, pos(1, 2), nil},
	{"scanner: key that starts like a name is another key", payload.Canonical,
		`{"latitude":"x","lat":1,"longitude":"y","lon":2,"tsx":"z","accuracy":"w"}`, pos(1, 2), nil},
	{"scanner: escaped key with a non-ASCII escape is another key", payload.Canonical,
		`{"lat":1,"lon":2,"l\u00e1t":"x"}`, pos(1, 2), nil},
	{"scanner: duplicate via a fully escaped key", payload.Canonical,
		`{"lat":1,"lon":2,"\u0074\u0073":1,"ts":2}`, payload.Position{}, payload.DuplicateKey},
	{"scanner: duplicate _type via an escaped key", payload.Auto,
		`{"_type":"location","_typ\u0065":"location","lat":1,"lon":2}`, payload.Position{}, payload.DuplicateKey},
	{"scanner: _type value with an escaped slash is not location", payload.Auto,
		`{"_type":"loc\/ation","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"scanner: long _type value is not location", payload.Auto,
		`{"_type":"locationlocationlocation","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"scanner: _type value with a non-ASCII escape is not location", payload.Auto,
		`{"_type":"locati\u00f6n","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"scanner: _type value fully escaped is location", payload.Auto,
		`{"_type":"\u006c\u006f\u0063\u0061\u0074\u0069\u006f\u006e","lat":1,"lon":2}`, pos(1, 2), nil},

	// Numbers off the fast path, and at its edges.
	{"scanner: more digits than the fast path takes: ParseFloat-exact", payload.Canonical,
		`{"lat":52.520008000000000000000001,"lon":13.40495400000000000000001}`, pos(52.520008, 13.404954), nil},
	{"scanner: 2^53+1 needs rounding: ParseFloat-exact", payload.Canonical,
		`{"lat":1,"lon":2,"acc":9007199254740993}`, withAcc(pos(1, 2), 9007199254740992), nil},
	{"scanner: exponent past 22", payload.Canonical,
		`{"lat":1e-23,"lon":1e-400,"acc":1e23}`, withAcc(pos(1e-23, 0), 1e23), nil},
	{"scanner: exponent with leading zeros", payload.Canonical,
		`{"lat":1e0001,"lon":-5E-0000001}`, pos(10, -0.5), nil},
	{"scanner: zero with a huge exponent is zero", payload.Canonical,
		`{"lat":0e999999999999,"lon":-0.000e-999999999999}`, pos(0, 0), nil},
	{"scanner: MaxFloat64 as an integer is finite", payload.Canonical,
		`{"lat":1,"lon":2,"acc":` + belowOverflowBound() + `}`, withAcc(pos(1, 2), math.MaxFloat64), nil},
	{"scanner: 2^1024-2^970 rounds to infinity: NotFinite", payload.Canonical,
		`{"lat":1,"lon":2,"acc":` + float64OverflowBound + `}`, payload.Position{}, payload.NotFinite},
	{"scanner: 2^1024-2^970 written as a fraction: NotFinite", payload.Canonical,
		`{"lat":1,"lon":2,"acc":0.000` + float64OverflowBound + `e312}`, payload.Position{}, payload.NotFinite},
	{"scanner: just below 2^1024-2^970 as a fraction: finite", payload.Canonical,
		`{"lat":1,"lon":2,"acc":1.` + belowOverflowBound()[1:] + `9999e308}`, withAcc(pos(1, 2), math.MaxFloat64), nil},
	{"scanner: negative overflow in lon: NotFinite", payload.Canonical,
		`{"lat":1,"lon":-1.8e308}`, payload.Position{}, payload.NotFinite},
	{"scanner: _type 1e999 is a number, not a string: WrongType, not NotFinite", payload.OwnTracks,
		`{"_type":1e999,"lat":1,"lon":2}`, payload.Position{}, payload.WrongType},
	{"scanner: lat 1e999 as an array element is no number field: WrongType", payload.Canonical,
		`{"lat":[1e999],"lon":2}`, payload.Position{}, payload.WrongType},
	{"scanner: saturating exponent: NotFinite", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1e99999999999999999999}`, payload.Position{}, payload.NotFinite},
}

func TestDecodeScanner(t *testing.T) {
	for _, tc := range scannerCases {
		t.Run(tc.name, func(t *testing.T) {
			var d payload.Decoder
			got, err := d.Decode([]byte(tc.in), tc.format)
			if err != tc.err {
				t.Fatalf("Decode(%.200s) error = %v, want %v", tc.in, err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("Decode(%.200s) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}
