package main

import (
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/shadow"
)

// style is edgefence's help (cmdhelp) with its flag types named.
var style = cmdhelp.Style{ValueName: valueName}

// usageFunc renders a command's help with its flags under groups.
func usageFunc(groups *cmdhelp.Groups) func(*ffcli.Command) string {
	return style.Usage(groups)
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
	case *shadow.List:
		return "strategies"
	case *ingest.TopicFlags:
		return "filter"
	}
	return ""
}
