package gate

import (
	"testing"

	"github.com/edgefence/edgefence/evaluator/history"
	"pgregory.net/rapid"
)

// Judged live in order (State) or placed late among history points
// (Mark), every fix gets the same decision: the rule is one.
func TestPropertyLiveAndLateJudgeAlike(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		speed := rapid.SampledFrom([]float64{0, 30, 70}).Draw(t, "speed")
		n := rapid.IntRange(1, 30).Draw(t, "fixes")
		var live State
		pts := make([]history.Point, n)
		want := make([]bool, n)
		ev := int64(0)
		for i := range n {
			ev += int64(rapid.IntRange(100, 3000).Draw(t, "gap_ms")) * 1e6
			// Mostly near each other, now and then a jump of up to 2 km.
			off := rapid.SampledFrom([]float64{0, 0, 0, 5, 50, 300, 2000}).Draw(t, "off_m")
			f := Fix{
				Event: ev, Lat: history.Fixed(52.5 + off/111_320), Lon: history.Fixed(13.4),
				Acc:     uint16(rapid.IntRange(0, 500).Draw(t, "acc_dm")),
				Untimed: rapid.IntRange(0, 9).Draw(t, "untimed") == 0,
			}
			want[i] = live.Judge(speed, f)
			pts[i] = history.Point{Event: f.Event, Lat: f.Lat, Lon: f.Lon, Acc: f.Acc, Gate: history.GateLate}
			if f.Untimed {
				pts[i].Gate |= history.GateUntimed
			}
		}
		aside := Mark(speed, pts)
		count := 0
		for i := range pts {
			if pts[i].Aside() != want[i] {
				t.Fatalf("fix %d: set aside %v late, %v live", i, pts[i].Aside(), want[i])
			}
			if want[i] {
				count++
			}
		}
		if aside != count {
			t.Fatalf("Mark counted %d, %d set aside", aside, count)
		}
	})
}

func TestFar(t *testing.T) {
	at := func(event int64, northM float64, accDm uint16) *Fix {
		return &Fix{Event: event * 1e9, Lat: history.Fixed(52.5 + northM/111_320), Lon: history.Fixed(13.4), Acc: accDm}
	}
	for _, tc := range []struct {
		name string
		a, b *Fix
		far  bool
	}{
		{"within the floor", at(0, 0, 0), at(0, 19, 0), false},
		{"beyond the floor at once", at(0, 0, 0), at(0, 21, 0), true},
		{"70 m/s for a second, plus the floor", at(0, 0, 0), at(1, 89, 0), false},
		{"beyond it", at(0, 0, 0), at(1, 91, 0), true},
		{"twice both accuracies", at(0, 0, 100), at(1, 70+39, 100), false},
		{"beyond them", at(0, 0, 100), at(1, 70+41, 100), true},
		{"time either way", at(1, 0, 0), at(0, 89, 0), false},
		{"untimed", &Fix{Untimed: true}, at(0, 1000, 0), false},
	} {
		if got := Far(70, tc.a, tc.b); got != tc.far {
			t.Errorf("%s: far = %v, want %v", tc.name, got, tc.far)
		}
	}
	if Far(0, at(0, 0, 0), at(0, 5000, 0)) {
		t.Error("speed 0 (off) judged a jump far")
	}
}

// Two fixes that agree are a device that moved; MaxRun in a row that do
// not are followed anyway.
func TestStateFollowsAgreementAndRuns(t *testing.T) {
	fix := func(s int64, northM float64) Fix {
		return Fix{Event: s * 1e9, Lat: history.Fixed(52.5 + northM/111_320), Lon: history.Fixed(13.4)}
	}
	var s State
	for i, tc := range []struct {
		f     Fix
		aside bool
	}{
		{fix(0, 0), false},     // the first is accepted
		{fix(1, 1000), true},   // a jump
		{fix(2, 1005), false},  // agrees with it: it moved
		{fix(3, 0), true},      // back: a jump again
		{fix(4, 3000), true},   // nor does this agree with anything
		{fix(5, -3000), false}, // a third in a row: followed
	} {
		if got := s.Judge(70, tc.f); got != tc.aside {
			t.Fatalf("fix %d: set aside %v, want %v", i, got, tc.aside)
		}
	}
}
