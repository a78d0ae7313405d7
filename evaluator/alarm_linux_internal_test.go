package evaluator

import "testing"

// On Linux the shards get the timerfd alarm, not the fallback: the
// fallback serves an idle broker's deadlines up to 2 ms late.
func TestLinuxAlarmIsATimerfd(t *testing.T) {
	a := newAlarm()
	defer a.Close()
	if _, ok := a.(*fdAlarm); !ok {
		t.Fatalf("newAlarm() = %T, want *fdAlarm", a)
	}
}
