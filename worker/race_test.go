//go:build race

package worker_test

// raceBuild says the test binary is race-built: so are the serve nodes it
// builds, so that a data race in a node under the node-kill test fails it.
const raceBuild = true
