package payload_test

import (
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

var (
	canonicalPing = []byte(`{"lat":52.520008,"lon":13.404954,"ts":1764547200123,"acc":8.5}`)
	ownTracksPing = []byte(`{"_type":"location","tid":"ab","lat":52.520008,"lon":13.404954,"tst":1764547200,"acc":12,"batt":80,"conn":"w","vel":0}`)
)

// TestDecodeSteadyStateAllocs pins the hot path's promise: a reused
// Decoder allocates nothing per ping once its buffers have grown.
func TestDecodeSteadyStateAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		f    payload.Format
	}{
		{"canonical", canonicalPing, payload.Canonical},
		{"canonical via auto", canonicalPing, payload.Auto},
		{"owntracks", ownTracksPing, payload.OwnTracks},
		{"owntracks transition", []byte(`{"_type":"transition","lat":1,"lon":2}`), payload.Auto},
		{"rejected lat", []byte(`{"lat":91,"lon":2}`), payload.Canonical},
		{"rejected type", []byte(`{"lat":"1","lon":2}`), payload.Canonical},
		{"not an object", []byte(`[1,2]`), payload.Canonical},
		{"too large", make([]byte, payload.DefaultMaxSize+1), payload.Canonical},
		{"not json: NMEA", []byte(`$GPGGA,123519,4807.038,N`), payload.Canonical},
		{"not json: truncated", []byte(`{"lat":1,"lon":2`), payload.Canonical},
		{"not json: NaN", []byte(`{"lat":NaN,"lon":2}`), payload.Canonical},
		{"not json: bad escape", []byte(`{"lat":1,"lon":2,"n":"a\qb"}`), payload.Canonical},
		{"not json: too deep", []byte(`{"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`), payload.Canonical},
		{"not finite lat", []byte(`{"lat":1e999,"lon":2}`), payload.Canonical},
		{"not finite acc", []byte(`{"lat":1,"lon":2,"acc":-1e400}`), payload.Canonical},
		{"not finite: 2^1024-2^970", []byte(`{"lat":1,"lon":2,"ts":` + float64OverflowBound + `}`), payload.Canonical},
		{"slow-path numbers", []byte(`{"lat":52.5200080000000000000001,"lon":1.3e-30,"ts":1e23}`), payload.Canonical},
		{"duplicate key", []byte(`{"lat":1,"l\u0061t":2,"lon":3}`), payload.Canonical},
		{"escaped keys", []byte(`{"\u006c\u0061\u0074":1,"lo\u006E":2,"\u0074s":3}`), payload.Canonical},
		{"missing type", []byte(`{"lat":1,"lon":2}`), payload.OwnTracks},
		{"nested unknown fields", []byte(`{"lat":1,"lon":2,"x":{"a":[1,{"b":"\u00e9"},null,true]}}`), payload.Auto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d payload.Decoder
			d.Decode(tc.in, tc.f) // grow buffers
			allocs := testing.AllocsPerRun(100, func() { d.Decode(tc.in, tc.f) })
			if allocs != 0 {
				t.Fatalf("Decode allocated %.1f times per run, want 0", allocs)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   []byte
		f    payload.Format
	}{
		{"canonical", canonicalPing, payload.Canonical},
		{"owntracks", ownTracksPing, payload.OwnTracks},
		{"auto", canonicalPing, payload.Auto},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var d payload.Decoder
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(bc.in, bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
