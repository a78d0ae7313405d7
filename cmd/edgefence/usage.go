package main

import (
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
)

// usageFunc renders a command's help (cmdhelp) with edgefence's flag
// types named and its removed flags left out.
func usageFunc(groups *cmdhelp.Groups) func(*ffcli.Command) string {
	return cmdhelp.Style{Hidden: hidden, ValueName: valueName}.Usage(groups)
}

// hidden reports whether f stays out of the help: a removed flag is
// still accepted, to explain itself, but is no longer offered.
func hidden(f *flag.Flag) bool {
	_, removed := f.Value.(*removedFlag)
	return removed
}

// valueName names what a flag of edgefence's own value types takes.
func valueName(v flag.Value) string {
	switch v.(type) {
	case flagvalue.Uint[uint8], flagvalue.Uint[uint16], flagvalue.Uint[uint32], flagvalue.Int32, flagvalue.Small:
		return "int"
	case flagvalue.Off, flagvalue.On:
		return "on|off"
	case flagvalue.Size:
		return "size"
	case flagvalue.Time:
		return "time"
	case *flagvalue.Durations:
		return "durations"
	case *flagvalue.Joined:
		return "list"
	case holdFlag:
		return "duration|adaptive"
	case *strategyList:
		return "strategies"
	case *ingest.TopicFlags:
		return "filter"
	}
	return ""
}
