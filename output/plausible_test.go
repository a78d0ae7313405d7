package output

import (
	"errors"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// A stored transition is plausible within the engine's own stamp bounds,
// and nothing else is: the year 2058, a stamp before the floor, a GPS
// week rollover, a decision in the future or long before its event.
func TestCheckRetainedBounds(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := clock.Clamper{Skew: 30 * time.Second, MaxAhead: 10 * time.Minute, Floor: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()}
	payload := func(event, decided time.Time) []byte {
		return TransitionJSON(&engine.Transition{Device: "d", Fence: "f", Type: engine.Enter, Event: event.UnixNano()}, decided)
	}
	for _, tc := range []struct {
		name           string
		event, decided time.Time
		ok             bool
	}{
		{"an hour old", now.Add(-time.Hour), now.Add(-time.Hour), true},
		{"a year old", now.AddDate(-1, 0, 0), now.AddDate(-1, 0, 0), true},
		{"a device clock 5 min ahead", now.Add(5 * time.Minute), now, true},
		{"the year 2058", time.Date(2058, 4, 22, 0, 0, 0, 0, time.UTC), now, false},
		{"ten years ahead, decided then too", now.AddDate(10, 0, 0), now.AddDate(10, 0, 0), false},
		{"before the floor", time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), now, false},
		{"a GPS week rollover", now.Add(-clock.WeekRollover), now, false},
		{"decided an hour from now", now.Add(-time.Minute), now.Add(time.Hour), false},
		{"an event a day after its decision", now.Add(-time.Hour), now.Add(-25 * time.Hour), false},
	} {
		_, err := CheckRetained("geofence", "geofence/f/d", payload(tc.event, tc.decided), c, now)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrImplausible) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, p := range []string{`{`, `{"device":"d","fence":"f","type":"LEAVE","ts":1}`, `{"device":"e","fence":"f","type":"ENTER","ts":1}`} {
		if _, err := CheckRetained("geofence", "geofence/f/d", []byte(p), c, now); !errors.Is(err, ErrImplausible) {
			t.Errorf("%s: %v, want ErrImplausible", p, err)
		}
	}
}

func TestTransitionPrefix(t *testing.T) {
	for topic, want := range map[string]string{"geofence/f/d": "geofence", "a/b/f/d": "a/b", "f/d": "", "d": "", "/f/d": ""} {
		if got, ok := TransitionPrefix(topic); got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", topic, got, ok, want)
		}
	}
}

// A store record is judged under its own topic's prefix, whatever the
// server's; a topic of fewer than three levels is no transition's.
func TestCheckStored(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	c := clock.Clamper{Skew: 30 * time.Second, MaxAhead: 10 * time.Minute}
	tr := TransitionJSON(&engine.Transition{Device: "d", Fence: "f", Type: engine.Enter, Event: now.Add(-time.Hour).UnixNano()}, now)
	if err := CheckStored("fleet/a/f/d", tr, c, now); err != nil {
		t.Errorf("under fleet/a: %v", err)
	}
	for _, topic := range []string{"f/d", "fleet/a/f/e"} {
		if err := CheckStored(topic, tr, c, now); !errors.Is(err, ErrImplausible) {
			t.Errorf("%s: %v, want ErrImplausible", topic, err)
		}
	}
}
