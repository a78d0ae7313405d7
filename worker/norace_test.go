//go:build !race

package worker_test

// raceBuild says the test binary is race-built (race_test.go).
const raceBuild = false
