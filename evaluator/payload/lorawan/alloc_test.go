package lorawan_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
)

// Decoding the documented shapes allocates nothing, rejections included.
func TestDecodeAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		f    payload.Format
	}{
		{"chirpstack", fixture(t, "chirpstack-v4-up.json"), payload.ChirpStack},
		{"chirpstack via auto", fixture(t, "chirpstack-v4-up.json"), payload.Auto},
		{"ttn", fixture(t, "ttn-v3-up.json"), payload.TTN},
		{"chirpstack v3", fixture(t, "chirpstack-v3-up.json"), payload.ChirpStack},
		{"chirpstack v3 json_v3", fixture(t, "chirpstack-v3-legacy-up.json"), payload.Auto},
		{"chirpstack heartbeat", []byte(`{"fCnt":3,"deviceInfo":{"devEui":"01"},"object":{"battery":3.6},"time":"2026-12-01T10:00:00Z"}`), payload.ChirpStack},
		{"rejected lat", []byte(`{"fCnt":3,"deviceInfo":{"devEui":"01"},"object":{"lat":91,"lon":1}}`), payload.ChirpStack},
		{"wrong type, named", []byte(`{"fCnt":3,"deviceInfo":{"devEui":"01"},"object":{"lat":"x","lon":1}}`), payload.ChirpStack},
		{"not json", []byte(`{"fCnt":3,`), payload.ChirpStack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d lorawan.Decoder
			m := &lorawan.Mapping{}
			if a := testing.AllocsPerRun(100, func() { d.Decode(tc.in, tc.f, m) }); a != 0 {
				t.Fatalf("Decode allocated %.1f times per run, want 0", a)
			}
		})
	}
}

// compact is a fixture as the servers publish it: without the
// indentation.
func compact(tb testing.TB, name string) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, fixture(tb, name)); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkDecode runs beside payload's canonical decoder, so the cost of
// an uplink reads against a canonical ping's (docs/lorawan.md).
func BenchmarkDecode(b *testing.B) {
	canonical := []byte(`{"lat":52.520008,"lon":13.404954,"ts":1764547200123,"acc":8.5}`)
	b.Run("canonical", func(b *testing.B) {
		var d payload.Decoder
		b.SetBytes(int64(len(canonical)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(canonical, payload.Canonical); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name string
		in   []byte
		f    payload.Format
	}{
		{"chirpstack", compact(b, "chirpstack-v4-up.json"), payload.ChirpStack},
		{"ttn", compact(b, "ttn-v3-up.json"), payload.TTN},
		{"chirpstack-v3", compact(b, "chirpstack-v3-up.json"), payload.ChirpStack},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var d lorawan.Decoder
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(bc.in, bc.f, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
