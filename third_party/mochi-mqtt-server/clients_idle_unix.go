// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

//go:build unix

package mqtt

import (
	"io"
	"os"
	"syscall"
)

// idleWaitSupported says whether idle connections can be waited on without
// a read buffer (readFD can read a descriptor).
const idleWaitSupported = true

// readFD reads a non-blocking descriptor once.
func readFD(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, err // not wrapped: the usual answer, and allocation free
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// wouldBlock reports whether err is readFD's error for a descriptor with
// nothing to read.
func wouldBlock(err error) bool {
	return err == syscall.EAGAIN
}
