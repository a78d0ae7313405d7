//go:build !unix

package main

// runWithStackShrinkOff does nothing where a process cannot exec itself;
// GODEBUG=gcshrinkstackoff=1 in the environment does the same.
func runWithStackShrinkOff() {}
