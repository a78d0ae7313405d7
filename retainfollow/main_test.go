package retainfollow_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a follower leaves a goroutine
// running after Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
