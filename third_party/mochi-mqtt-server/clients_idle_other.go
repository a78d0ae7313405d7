// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

//go:build !unix

package mqtt

import "errors"

// idleWaitSupported says whether idle connections can be waited on without
// a read buffer: not here, they keep theirs.
const idleWaitSupported = false

func readFD(fd uintptr, p []byte) (int, error) {
	return 0, errors.ErrUnsupported
}

func wouldBlock(err error) bool { return false }
