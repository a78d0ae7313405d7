package output

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// A retained transition reads back into what a restart restores.
func TestParseRetainedRoundTrip(t *testing.T) {
	decided := time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC)
	tr := &engine.Transition{Device: "truck-42", Fence: "depot-7", Type: engine.Exit,
		Event: time.Date(2026, 12, 1, 10, 0, 0, 123_456_789, time.UTC).UnixNano(), Ingest: decided, Decided: decided}
	topic := TransitionTopic("geofence", tr.Fence, tr.Device)
	r, err := ParseRetained("geofence", topic, TransitionJSON(tr, decided))
	if err != nil {
		t.Fatal(err)
	}
	if r.Device != "truck-42" || r.Fence != "depot-7" || r.Type != engine.Exit || !r.Decided.Equal(decided) {
		t.Errorf("read back %+v", r)
	}
	if want := tr.Event / 1e6 * 1e6; r.Event != want { // the payload keeps milliseconds
		t.Errorf("event %d, want %d", r.Event, want)
	}
	for _, tc := range []struct {
		topic, payload string
		err            error
	}{
		{"geofence/depot-7/truck-42", "not json", ErrUnreadable},
		{"geofence/other/truck-42", string(TransitionJSON(tr, decided)), ErrNotTransition},
		{"elsewhere/depot-7/truck-42", string(TransitionJSON(tr, decided)), ErrNotTransition},
		{"geofence/depot-7/truck-42", `{"device":"truck-42","fence":"depot-7","type":"LEAVE"}`, ErrNotTransition},
	} {
		if _, err := ParseRetained("geofence", tc.topic, []byte(tc.payload)); !errors.Is(err, tc.err) {
			t.Errorf("%s %s: %v, want %v", tc.topic, tc.payload, err, tc.err)
		}
	}
}

func TestRejectTopic(t *testing.T) {
	for device, want := range map[string]string{
		"truck-1":                "edgefence/rejected/truck-1",
		"":                       "edgefence/rejected",
		strings.Repeat("x", 129): "edgefence/rejected",
		"a/b":                    "edgefence/rejected", // extra levels
		"a+":                     "edgefence/rejected",
		"#":                      "edgefence/rejected",
		"nul\x00":                "edgefence/rejected", // some clients drop their connection on control bytes
		"bell\x07":               "edgefence/rejected",
		"truck-\u00e9":           "edgefence/rejected/truck-\u00e9",
	} {
		if got := RejectTopic("edgefence/rejected", device); got != want {
			t.Errorf("RejectTopic(%.10q) = %q, want %q", device, got, want)
		}
	}
}

// A transition caused by a LoRaWAN uplink says which clock its stamp came
// from; canonical and OwnTracks transitions stay as they were.
func TestTimeSource(t *testing.T) {
	decided := time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC)
	tr := &engine.Transition{Device: "0101010101010101", Fence: "depot-7", Type: engine.Enter,
		Event: decided.UnixNano(), Stamp: decided.UnixNano(), Ingest: decided, Source: payload.SourceGatewayGPS}
	if got := string(TransitionJSON(tr, decided)); !strings.Contains(got, `"clamped":false,"time_source":"gateway_gps",`) {
		t.Errorf("transition %s lacks time_source", got)
	}
	tr.Source = payload.SourceUnset
	if got := string(TransitionJSON(tr, decided)); strings.Contains(got, "time_source") {
		t.Errorf("canonical transition %s has a time_source", got)
	}
	l := &engine.Late{Ping: engine.Ping{Device: "d", Source: payload.SourceNetwork, Ingest: decided}, Reason: engine.LateBeforeHistory}
	if got := string(LateJSON(l)); !strings.Contains(got, `"time_source":"network_server"`) {
		t.Errorf("late %s lacks time_source", got)
	}
}
