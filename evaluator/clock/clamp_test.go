package clock

import "testing"

func TestParseClampReasonInvertsString(t *testing.T) {
	for r := ClampNone; r < NumClampReasons; r++ {
		got, ok := ParseClampReason(r.String())
		if !ok || got != r {
			t.Errorf("ParseClampReason(%q) = %v, %v; want %v, true", r.String(), got, ok, r)
		}
	}
	if _, ok := ParseClampReason("unknown"); ok {
		t.Error(`ParseClampReason("unknown") succeeded`)
	}
}
