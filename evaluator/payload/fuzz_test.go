package payload_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// FuzzDecode checks Decode's contract on arbitrary bytes: it never panics,
// only ever fails with a Reason, is pure across Decoder reuse, agrees with
// encoding/json on what is JSON, and every Position it returns is usable
// and matches what encoding/json reads from the same payload.
func FuzzDecode(f *testing.F) {
	for _, group := range [][]decodeCase{canonicalCases, syntaxCases, ownTracksCases, autoCases} {
		for _, tc := range group {
			f.Add([]byte(tc.in), byte(tc.format))
		}
	}
	var reused payload.Decoder
	f.Fuzz(func(t *testing.T, data []byte, format byte) {
		fm := payload.Format(format)
		got, err := reused.Decode(data, fm)
		var fresh payload.Decoder
		if got2, err2 := fresh.Decode(data, fm); got2 != got || err2 != err {
			t.Fatalf("reused Decoder gave %+v, %v; fresh gave %+v, %v", got, err, got2, err2)
		}
		if err != nil {
			r, ok := err.(payload.Reason)
			if !ok {
				t.Fatalf("error %T %v is not a Reason", err, err)
			}
			if got != (payload.Position{}) {
				t.Fatalf("%v came with a non-zero Position %+v", r, got)
			}
		}
		if tooLarge := len(data) > payload.DefaultMaxSize; tooLarge != (err == payload.TooLarge) {
			t.Fatalf("%d bytes gave %v", len(data), err)
		}
		if err == payload.TooLarge {
			return
		}
		// The nesting limit makes deep but valid JSON NotJSON, so only this
		// direction holds here; FuzzDecodeMatchesEncodingJSON checks both.
		if !json.Valid(data) && err != payload.NotJSON {
			t.Fatalf("invalid JSON %q gave %+v, %v", data, got, err)
		}
		if err != nil {
			return
		}

		if math.IsNaN(got.Lat) || got.Lat < -90 || got.Lat > 90 ||
			math.IsNaN(got.Lon) || got.Lon < -180 || got.Lon > 180 {
			t.Fatalf("accepted out-of-range position %+v", got)
		}
		if got.HasAcc && !(got.Acc >= 0 && !math.IsInf(got.Acc, 0)) {
			t.Fatalf("accepted bad acc %+v", got)
		}
		if !got.HasAcc && got.Acc != 0 || !got.HasTs && got.TsNs != 0 {
			t.Fatalf("absent field left a value %+v", got)
		}
		checkAgainstEncodingJSON(t, data, fm, got)
	})
}

// checkAgainstEncodingJSON re-reads an accepted payload with encoding/json
// and checks that Decode took the same fields and values.
func checkAgainstEncodingJSON(t *testing.T, data []byte, fm payload.Format, got payload.Position) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("accepted %q, encoding/json says %v", data, err)
	}
	present := func(k string) bool { return m[k] != nil && !bytes.Equal(m[k], []byte("null")) }
	num := func(k string) float64 {
		x, err := strconv.ParseFloat(string(m[k]), 64)
		if err != nil {
			t.Fatalf("accepted %q, but %s is %s", data, k, m[k])
		}
		return x
	}
	tsKey, unit := "ts", int64(1e6)
	if _, typed := m["_type"]; fm == payload.OwnTracks || fm != payload.Canonical && typed {
		tsKey, unit = "tst", int64(1e9)
		var typ string
		if json.Unmarshal(m["_type"], &typ) != nil || typ != "location" {
			t.Fatalf("accepted %q with _type %s", data, m["_type"])
		}
	}
	if num("lat") != got.Lat || num("lon") != got.Lon {
		t.Fatalf("%q: got %v,%v; encoding/json reads %s,%s", data, got.Lat, got.Lon, m["lat"], m["lon"])
	}
	if got.HasAcc != present("acc") || got.HasAcc && num("acc") != got.Acc {
		t.Fatalf("%q: got acc %v %v; encoding/json reads %s", data, got.HasAcc, got.Acc, m["acc"])
	}
	if got.HasTs != present(tsKey) {
		t.Fatalf("%q: got HasTs %v; encoding/json reads %s=%s", data, got.HasTs, tsKey, m[tsKey])
	}
	if stamp, err := strconv.ParseInt(string(m[tsKey]), 10, 64); got.HasTs && err == nil && got.TsNs != satMul(stamp, unit) {
		t.Fatalf("%q: got TsNs %d for %s %d", data, got.TsNs, tsKey, stamp)
	}
}
