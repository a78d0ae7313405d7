package ingest

import (
	"errors"
	"testing"
)

func TestTelemetryFilterShared(t *testing.T) {
	tf, err := ParseTelemetryFilter("$share/edgefence/devices/+/telemetry=canonical")
	if err != nil {
		t.Fatal(err)
	}
	if tf.Filter != "$share/edgefence/devices/+/telemetry" || tf.Share != "edgefence" {
		t.Fatalf("Filter %q Share %q: want the filter as given and group edgefence", tf.Filter, tf.Share)
	}
	// Topics are matched against the filter without $share/<group>/.
	if id, ok, err := tf.Match("devices/truck-7/telemetry"); !ok || err != nil || id != "truck-7" {
		t.Errorf("Match = %q %v %v, want truck-7", id, ok, err)
	}
	if _, ok, _ := tf.Match("$share/edgefence/devices/truck-7/telemetry"); ok {
		t.Error("matched a topic that spells the $share prefix")
	}
	if _, ok, err := tf.Match("devices//telemetry"); !ok || !errors.Is(err, ErrDeviceID) {
		t.Errorf("empty id: ok %v err %v, want ErrDeviceID", ok, err)
	}
	plain, _ := ParseTelemetryFilter("devices/+/telemetry")
	if plain.Share != "" {
		t.Errorf("plain filter has group %q", plain.Share)
	}
	for _, s := range []string{"$share//devices/+/telemetry", "$share/g+/devices/+/t", "$share/g/", "$share/g/devices/telemetry", "$share/g/devices/#"} {
		if _, err := ParseTelemetryFilter(s); err == nil {
			t.Errorf("ParseTelemetryFilter(%q) accepted", s)
		}
	}
}
