package lorawan_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
)

// FuzzDecode checks Decode's contract on arbitrary bytes: no panic, only
// Reasons as errors, pure across Decoder reuse, NotJSON for what
// encoding/json rejects, and every position it returns in range.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"chirpstack-v4-up.json", "ttn-v3-up.json", "chirpstack-v3-up.json", "chirpstack-v3-legacy-up.json"} {
		f.Add(fixture(f, name), byte(payload.Auto), false)
	}
	f.Add([]byte(`{"fCnt":1,"deviceInfo":{"devEui":"x"},"object":{"gps":{"lat":"1","lng":2},"time":"2026-12-01T10:00:00+02:00"}}`), byte(payload.ChirpStack), false)
	f.Add([]byte(`{"devEUI":"AQEBAQEBAQE=","fCnt":2,"objectJSON":"{\"lat\":\"1\",\"lon\":2,\"n\":\"\ud83d\ude9a\\u0041\"}"}`), byte(payload.Auto), false)
	f.Add([]byte(`{"end_device_ids":{"device_id":"d"},"uplink_message":{"decoded_payload":{"a":{"b":1,"c":2}}}}`), byte(payload.TTN), true)
	var reused lorawan.Decoder
	mapped := &lorawan.Mapping{Lat: lorawan.Path{"a", "b"}, Lon: lorawan.Path{"a", "c"}, Ts: lorawan.Path{"t"}}
	f.Fuzz(func(t *testing.T, data []byte, format byte, useMapping bool) {
		var m *lorawan.Mapping
		if useMapping {
			m = mapped
		}
		fm := payload.Format(format)
		got, err := reused.Decode(data, fm, m)
		var fresh lorawan.Decoder
		if got2, err2 := fresh.Decode(data, fm, m); err2 != err || string(got2.Device) != string(got.Device) || got2.Position != got.Position ||
			fresh.Field() != reused.Field() {
			t.Fatalf("reused Decoder gave %+v, %v (%q); fresh gave %+v, %v (%q)", got, err, reused.Field(), got2, err2, fresh.Field())
		}
		if (err == payload.WrongType) != (reused.Field() != "") {
			t.Fatalf("%v with field %q: a wrong_type names its field, nothing else does", err, reused.Field())
		}
		if err != nil {
			if _, ok := err.(payload.Reason); !ok {
				t.Fatalf("error %T %v is not a Reason", err, err)
			}
		}
		if err == payload.TooLarge {
			return
		}
		if !json.Valid(data) && err != payload.NotJSON {
			t.Fatalf("invalid JSON %q gave %+v, %v", data, got, err)
		}
		if err != nil || !got.HasPosition {
			return
		}
		p := got.Position
		if math.IsNaN(p.Lat) || p.Lat < -90 || p.Lat > 90 || math.IsNaN(p.Lon) || p.Lon < -180 || p.Lon > 180 {
			t.Fatalf("accepted out-of-range position %+v", p)
		}
		if p.HasAcc && !(p.Acc >= 0 && !math.IsInf(p.Acc, 0)) {
			t.Fatalf("accepted bad acc %+v", p)
		}
		if got.Format != payload.ChirpStack && got.Format != payload.TTN {
			t.Fatalf("decoded as %v", got.Format)
		}
	})
}
