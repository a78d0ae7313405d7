package payload_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// FuzzDecodeMatchesEncodingJSON holds Decode to a reference decoder built
// on encoding/json: the same Reason, or the same Position, for any input.
// In particular Decode's NotJSON is exactly !json.Valid for input within
// the size and nesting limits, keys match as encoding/json decodes them,
// escapes included, and numbers are the float64s encoding/json reads.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, group := range [][]decodeCase{canonicalCases, syntaxCases, ownTracksCases, autoCases, scannerCases} {
		for _, tc := range group {
			f.Add([]byte(tc.in), byte(tc.format))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, format byte) {
		fm := payload.Format(format)
		var d payload.Decoder
		got, err := d.Decode(data, fm)
		want, slack, wantErr := referenceDecode(t, data, fm)
		if err != wantErr {
			t.Fatalf("Decode(%q, %v) error = %v, encoding/json says %v", data, fm, err, wantErr)
		}
		if err != nil {
			return
		}
		same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
		off := got.TsNs - want.TsNs
		if !same(got.Lat, want.Lat) || !same(got.Lon, want.Lon) || !same(got.Acc, want.Acc) ||
			got.HasAcc != want.HasAcc || got.HasTs != want.HasTs || off > slack || -off > slack {
			t.Fatalf("Decode(%q, %v) = %+v, encoding/json reads %+v", data, fm, got, want)
		}
	})
}

// maxNesting is the depth of arrays and objects past which Decode, unlike
// encoding/json, rejects valid JSON.
const maxNesting = 300

// referenceDecode is Decode's documented contract written with
// encoding/json. Its TsNs is the exact product of the stamp and its unit,
// rounded half away from zero and saturated; slack is the rounding error
// Decode may add when it scales a fractional stamp in float64.
func referenceDecode(t *testing.T, data []byte, fm payload.Format) (p payload.Position, slack int64, err error) {
	if len(data) > payload.DefaultMaxSize {
		return p, 0, payload.TooLarge
	}
	if !json.Valid(data) || nesting(data) > maxNesting {
		return p, 0, payload.NotJSON
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return p, 0, payload.NotObject
	}
	members := map[string][]json.RawMessage{} // by decoded key, every copy
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatalf("valid %q: reading a key: %v", data, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("valid %q: reading a value: %v", data, err)
		}
		members[key.(string)] = append(members[key.(string)], raw)
	}

	// value decodes key's single value as encoding/json does into an any;
	// nil when absent or null.
	value := func(key string) (any, error) {
		switch raws := members[key]; len(raws) {
		case 0:
			return nil, nil
		case 1:
			var v any
			if err := json.Unmarshal(raws[0], &v); err != nil {
				// In valid JSON only a number beyond float64 fails, maybe
				// inside an array or object.
				if c := raws[0][0]; c == '-' || '0' <= c && c <= '9' {
					return overflowing{}, nil
				}
				return raws[0], nil
			}
			return v, nil
		}
		return nil, payload.DuplicateKey
	}
	number := func(key string) (float64, bool, error) {
		v, err := value(key)
		switch x := v.(type) {
		case nil:
			return 0, false, err
		case float64:
			return x, true, nil
		case overflowing:
			return 0, false, payload.NotFinite
		}
		return 0, false, payload.WrongType
	}
	coord := func(key string, limit float64, missing, outside payload.Reason) (float64, error) {
		x, ok, err := number(key)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return 0, missing
		case math.Abs(x) > limit:
			return 0, outside
		}
		return x, nil
	}

	has := func(key string) bool { _, ok := members[key]; return ok }
	if fm == payload.ChirpStack || fm == payload.TTN || fm != payload.Canonical && fm != payload.OwnTracks &&
		!has("_type") && !has("lat") && !has("lon") && (has("deviceInfo") || has("end_device_ids")) {
		return p, 0, payload.Uplink
	}

	tsKey, unit := "ts", int64(1e6)
	if _, typed := members["_type"]; fm == payload.OwnTracks || fm != payload.Canonical && typed {
		typ, err := value("_type")
		s, isString := typ.(string)
		switch {
		case err != nil:
			return p, 0, err
		case typ == nil:
			return p, 0, payload.MissingType
		case !isString:
			return p, 0, payload.WrongType
		case s != "location":
			return p, 0, payload.Ignored
		}
		tsKey, unit = "tst", int64(1e9)
	}
	if p.Lat, err = coord("lat", 90, payload.MissingLat, payload.LatRange); err != nil {
		return payload.Position{}, 0, err
	}
	if p.Lon, err = coord("lon", 180, payload.MissingLon, payload.LonRange); err != nil {
		return payload.Position{}, 0, err
	}
	ts, hasTs, err := number(tsKey)
	if err != nil {
		return payload.Position{}, 0, err
	}
	if p.Acc, p.HasAcc, err = number("acc"); err != nil {
		return payload.Position{}, 0, err
	}
	if p.Acc < 0 {
		return payload.Position{}, 0, payload.AccRange
	}
	if hasTs {
		p.TsNs, p.HasTs = exactStamp(ts, unit), true
		if ts != math.Trunc(ts) {
			slack = 1
		}
	}

	// The same values, decoded the plain way. Unmarshal may report an
	// overflowing unknown field, but it still fills in the rest.
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if m["lat"] != p.Lat || m["lon"] != p.Lon || p.HasAcc && m["acc"] != p.Acc || p.HasTs && m[tsKey] != ts {
		t.Fatalf("%q: reference %+v disagrees with map %v", data, p, m)
	}
	return p, slack, nil
}

// overflowing stands for a JSON number beyond float64.
type overflowing struct{}

// exactStamp is x*unit rounded half away from zero, saturated to int64.
func exactStamp(x float64, unit int64) int64 {
	r := new(big.Rat).SetFloat64(x)
	r.Mul(r, new(big.Rat).SetInt64(unit))
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if rem.Sign() != 0 && new(big.Int).Abs(new(big.Int).Lsh(rem, 1)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(rem.Sign())))
	}
	switch {
	case q.IsInt64():
		return q.Int64()
	case q.Sign() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}

// nesting returns how deeply arrays and objects nest in valid JSON.
func nesting(data []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func TestNesting(t *testing.T) {
	for in, want := range map[string]int{
		`1`: 0, `[]`: 1, `{"a":[{}]}`: 3, `["[[","\"[",{"\\":"{"}]`: 2, `[[],[[]]]`: 3,
	} {
		if got := nesting([]byte(in)); got != want {
			t.Errorf("nesting(%s) = %d, want %d", in, got, want)
		}
	}
}
