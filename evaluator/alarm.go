package evaluator

import "time"

// An alarm wakes a shard's goroutine at its next hold deadline. The Go
// runtime serves its timers to the microsecond while it is busy, but an
// idle process waits for them in epoll_wait, whose timeout is whole
// milliseconds and at least one: a time.Timer due in 0.3 ms fires after
// 1 ms. At a steady load pings arrive in clumps with idle gaps between,
// and at a light load almost every ping leaves the buffer on the timer,
// so the hold came out up to 1-2 ms longer than configured (release lag
// p90 0.75-1.0 ms, p99 1.25 ms at 5,000 pings/s). On Linux the alarm is a
// timerfd the runtime's poller watches: its expiry wakes the poller on
// time, whatever the poller's timeout. Elsewhere, and when a timerfd
// cannot be made, it is a time.Timer.
type alarm interface {
	// C receives after the alarm goes off; a value may be stale (sent for
	// a setting that was replaced since), so the receiver checks what is
	// due.
	C() <-chan time.Time
	// Set arms the alarm to go off after d, replacing any earlier
	// setting; d <= 0 sets it off at once.
	Set(d time.Duration)
	// Close disarms the alarm and releases what it holds.
	Close()
}

// timerAlarm is the portable alarm.
type timerAlarm struct{ t *time.Timer }

func newTimerAlarm() *timerAlarm {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerAlarm{t}
}

func (a *timerAlarm) C() <-chan time.Time { return a.t.C }
func (a *timerAlarm) Set(d time.Duration) { a.t.Reset(d) }
func (a *timerAlarm) Close()              { a.t.Stop() }
