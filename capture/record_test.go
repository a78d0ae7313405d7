package capture_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// The documented line, byte for byte.
func TestAppendJSONFormat(t *testing.T) {
	for _, tc := range []struct {
		r    capture.Record
		want string
	}{
		{
			capture.Record{Seq: 12, Device: "truck-42", Lat: 52.52, Lon: 13.4, Acc: 8.5, HasAcc: true,
				Stamp: 1764547200123000000, HasStamp: true, Event: 1764547200123000000, Ingest: 1764547200140123456},
			`{"seq":12,"device":"truck-42","lat":52.52,"lon":13.4,"acc":8.5,"stamp":1764547200123000000,"event":1764547200123000000,"ingest":1764547200140123456}`,
		},
		{
			capture.Record{Seq: 13, Device: "truck-42", Lat: -0.5, Lon: 180, Event: 1764547200140123456,
				Clamp: clock.ClampMissing, Ingest: 1764547200140123456},
			`{"seq":13,"device":"truck-42","lat":-0.5,"lon":180,"event":1764547200140123456,"clamp":"missing","ingest":1764547200140123456}`,
		},
		{
			capture.Record{Seq: 1, Device: "a\"\\\n\x01\xffé", Event: 1, Ingest: 2},
			`{"seq":1,"device":"a\"\\\n\u0001\ufffdé","lat":0,"lon":0,"event":1,"ingest":2}`,
		},
	} {
		if got := string(capture.AppendJSON(nil, &tc.r)); got != tc.want {
			t.Errorf("AppendJSON:\n got %s\nwant %s", got, tc.want)
		}
	}
}

// Whatever AppendJSON writes is JSON that encoding/json reads back to the
// same values.
func TestAppendJSONIsJSON(t *testing.T) {
	for _, r := range sampleRecords(20) {
		b := capture.AppendJSON(nil, &r)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, b)
		}
		if m["device"] != r.Device {
			t.Errorf("device %q read back as %q", r.Device, m["device"])
		}
	}
}

func TestPingRoundTrip(t *testing.T) {
	p := engine.Ping{Device: "d", Lat: 1.5, Lon: 2.25, Acc: 3, HasAcc: true, Clamp: clock.ClampFuture,
		Event: base, Stamp: base + 9e9, HasStamp: true, Ingest: time.Unix(0, base+123)}
	r := capture.FromPing(7, &p)
	if r.Seq != 7 || r.Ingest != base+123 {
		t.Fatalf("FromPing: %+v", r)
	}
	q := r.Ping()
	if !q.Ingest.Equal(p.Ingest) {
		t.Errorf("Ingest %v, want %v", q.Ingest, p.Ingest)
	}
	q.Ingest = p.Ingest
	if q != p {
		t.Errorf("Ping() = %+v, want %+v", q, p)
	}
}
