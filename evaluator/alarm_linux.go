package evaluator

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fdAlarm is a timerfd read by a goroutine of its own: the runtime's
// poller wakes it when the timerfd expires, and it passes the expiry on.
type fdAlarm struct {
	f    *os.File
	rc   syscall.RawConn // arms the descriptor without racing its Close
	c    chan time.Time
	done chan struct{}
}

// newAlarm returns a timerfd alarm, or the portable one when the kernel
// (or a sandbox) refuses a timerfd.
func newAlarm() alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerAlarm()
	}
	// A non-blocking descriptor is read through the runtime's poller.
	f := os.NewFile(uintptr(fd), "hold-alarm")
	rc, err := f.SyscallConn()
	// Only a descriptor in the poller takes a deadline; a blocking read
	// would hold a thread, and Close could not wake it.
	if err == nil {
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		return newTimerAlarm()
	}
	a := &fdAlarm{f: f, rc: rc, c: make(chan time.Time, 1), done: make(chan struct{})}
	go a.run()
	return a
}

func (a *fdAlarm) run() {
	defer close(a.done)
	var buf [8]byte // the expiry count
	for {
		if _, err := a.f.Read(buf[:]); err != nil {
			return // closed
		}
		select {
		case a.c <- time.Now():
		default: // one pending wake-up is enough
		}
	}
}

func (a *fdAlarm) C() <-chan time.Time { return a.c }

func (a *fdAlarm) Set(d time.Duration) {
	// A zero it_value disarms a timerfd: the soonest is 1 ns.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	// Only a closed alarm fails here, and nothing waits on it then.
	_ = a.rc.Control(func(fd uintptr) { _ = unix.TimerfdSettime(int(fd), 0, &spec, nil) })
}

func (a *fdAlarm) Close() {
	a.f.Close() // wakes the reader with an error
	<-a.done
}
