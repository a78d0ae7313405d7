package loadgen

import "syscall"

// RaiseFileLimit raises the soft limit on open files to the hard limit
// (or want, if lower) and returns the new soft limit. Child processes
// started afterwards inherit it.
func RaiseFileLimit(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	n := min(want, lim.Max)
	if n <= lim.Cur {
		n = lim.Cur
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}
