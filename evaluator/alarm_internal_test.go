package evaluator

import (
	"slices"
	"testing"
	"time"
)

// alarms returns the platform's alarm and the portable one, by name.
func alarms() map[string]func() alarm {
	return map[string]func() alarm{
		"platform": newAlarm,
		"timer":    func() alarm { return newTimerAlarm() },
	}
}

// An alarm goes off once after its setting, a later setting replaces an
// earlier one, and Close stops what it runs (goleak checks, TestMain).
func TestAlarmGoesOffForItsLatestSetting(t *testing.T) {
	for name, mk := range alarms() {
		t.Run(name, func(t *testing.T) {
			a := mk()
			defer a.Close()
			a.Set(time.Hour)
			a.Set(time.Millisecond) // replaces the hour
			select {
			case <-a.C():
			case <-time.After(10 * time.Second):
				t.Fatal("the alarm set for 1 ms did not go off; the hour's setting was kept")
			}
			a.Set(time.Hour)
			select {
			case <-a.C():
				t.Fatal("the alarm set for an hour went off at once")
			case <-time.After(20 * time.Millisecond):
			}
			a.Set(0) // at once
			select {
			case <-a.C():
			case <-time.After(10 * time.Second):
				t.Fatal("the alarm set for 0 did not go off")
			}
		})
	}
}

// Setting a closed alarm is harmless: a shard's last owner may settle
// after its goroutine stopped.
func TestClosedAlarmIgnoresSettings(t *testing.T) {
	for name, mk := range alarms() {
		t.Run(name, func(t *testing.T) {
			a := mk()
			a.Close()
			a.Set(time.Millisecond)
		})
	}
}

// BenchmarkAlarmLateness measures how late each alarm goes off when set
// 300 µs ahead in an otherwise idle process (the gap between a clump of
// pings and the next): the runtime's timers wait in epoll_wait for whole
// milliseconds then, a timerfd does not. Reports the median and the
// 90th percentile of the lateness.
func BenchmarkAlarmLateness(b *testing.B) {
	for _, name := range []string{"timer", "platform"} {
		b.Run(name, func(b *testing.B) {
			a := alarms()[name]()
			defer a.Close()
			const ahead = 300 * time.Microsecond
			late := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				a.Set(ahead)
				<-a.C()
				late = append(late, time.Since(t0)-ahead)
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2].Microseconds()), "µs-late-p50")
			b.ReportMetric(float64(late[len(late)*9/10].Microseconds()), "µs-late-p90")
		})
	}
}
