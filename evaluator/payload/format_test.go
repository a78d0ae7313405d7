package payload_test

import (
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

func TestFormat(t *testing.T) {
	for _, f := range []payload.Format{payload.Auto, payload.Canonical, payload.OwnTracks, payload.ChirpStack, payload.TTN} {
		got, err := payload.ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", f.String(), got, err, f)
		}
	}
	for s, want := range map[string]payload.Format{"auto": payload.Auto, "canonical": payload.Canonical, "owntracks": payload.OwnTracks, "chirpstack": payload.ChirpStack, "ttn": payload.TTN} {
		if got, err := payload.ParseFormat(s); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "json", "OwnTracks ", "geojson"} {
		if _, err := payload.ParseFormat(s); err == nil {
			t.Errorf("ParseFormat(%q) accepted", s)
		}
	}
	if got := payload.Format(9).String(); got != "Format(9)" {
		t.Errorf("Format(9).String() = %q", got)
	}
}
