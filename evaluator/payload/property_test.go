package payload_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// satMul is the expected TsNs for an integral stamp: stamp*unit, saturated.
func satMul(stamp, unit int64) int64 {
	switch {
	case stamp > math.MaxInt64/unit:
		return math.MaxInt64
	case stamp < math.MinInt64/unit:
		return math.MinInt64
	}
	return stamp * unit
}

// TestDecodeRoundTrip: whatever a well-behaved tracker encodes, with
// strconv by hand or with encoding/json, in any key order, decodes back to
// exactly the same values.
func TestDecodeRoundTrip(t *testing.T) {
	var d payload.Decoder // shared on purpose: reuse must not change results
	rapid.Check(t, func(t *rapid.T) {
		lat := rapid.Float64Range(-90, 90).Draw(t, "lat")
		lon := rapid.Float64Range(-180, 180).Draw(t, "lon")
		hasTs := rapid.Bool().Draw(t, "hasTs")
		// Mostly realistic stamps, sometimes any int64 to exercise saturation.
		stamp := rapid.OneOf(rapid.Int64Range(-1e13, 1e13), rapid.Int64()).Draw(t, "stamp")
		hasAcc := rapid.Bool().Draw(t, "hasAcc")
		acc := rapid.OneOf(rapid.Float64Range(0, 1e4), rapid.Float64Min(0)).Draw(t, "acc")
		own := rapid.Bool().Draw(t, "owntracks")
		fmtByte := rapid.SampledFrom([]byte{'g', 'f', 'e'}).Draw(t, "floatFormat")
		useJSON := rapid.Bool().Draw(t, "encodingJSON")

		tsKey, unit, format := "ts", int64(1e6), payload.Canonical
		if own {
			tsKey, unit, format = "tst", int64(1e9), payload.OwnTracks
		}
		if rapid.Bool().Draw(t, "auto") {
			format = payload.Auto
		}

		var in []byte
		if useJSON {
			m := map[string]any{"lat": lat, "lon": lon, "batt": 87}
			if own {
				m["_type"] = "location"
			}
			if hasTs {
				m[tsKey] = stamp
			}
			if hasAcc {
				m["acc"] = acc
			}
			var err error
			if in, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
		} else {
			num := func(x float64) string { return strconv.FormatFloat(x, fmtByte, -1, 64) }
			kv := []string{`"lat":` + num(lat), `"lon":` + num(lon), `"batt":87`}
			if own {
				kv = append(kv, `"_type":"location"`)
			}
			if hasTs {
				kv = append(kv, `"`+tsKey+`":`+strconv.FormatInt(stamp, 10))
			}
			if hasAcc {
				kv = append(kv, `"acc":`+num(acc))
			}
			kv = rapid.Permutation(kv).Draw(t, "order")
			in = []byte("{" + strings.Join(kv, ",") + "}")
		}

		got, err := d.Decode(in, format)
		if err != nil {
			t.Fatalf("Decode(%s) error %v", in, err)
		}
		want := payload.Position{Lat: lat, Lon: lon}
		if hasTs {
			want.TsNs, want.HasTs = satMul(stamp, unit), true
		}
		if hasAcc {
			want.Acc, want.HasAcc = acc, true
		}
		if got != want {
			t.Fatalf("Decode(%s) = %+v, want %+v", in, got, want)
		}
	})
}
