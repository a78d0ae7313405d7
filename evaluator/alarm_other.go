//go:build !linux

package evaluator

func newAlarm() alarm { return newTimerAlarm() }
