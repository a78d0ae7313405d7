// Command edgefence is an MQTT edge broker for GPS trackers that turns raw
// position pings into trustworthy geofence transitions.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/internal/cmdhelp"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		runWithStackShrinkOff()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func rootCommand() *ffcli.Command {
	return &ffcli.Command{
		Name:       "edgefence",
		ShortUsage: "edgefence <command> [flags]",
		LongHelp:   "An MQTT edge broker that turns tracker pings into geofence transitions, ordered by event time.",
		Subcommands: []*ffcli.Command{
			serveCommand(),
			bridgeCommand(),
			workerCommand(),
			replayCommand(),
			simulateCommand(),
			loadgenCommand(),
			passwdCommand(),
			storeCommand(),
			versionCommand(),
		},
	}
}

// run runs the command line args and returns the exit code (cmdhelp's
// Program.Run: help to stdout when asked for, an error last on stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdhelp.Program{Root: rootCommand(), Style: style, Version: version}.Run(ctx, args, stdout, stderr)
}

func versionCommand() *ffcli.Command {
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "edgefence version (or edgefence --version)",
		ShortHelp:  "print the version",
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence version", args)
			}
			fmt.Println(version())
			return nil
		},
	}
}

// buildVersion is stamped by scripts/build (-ldflags "-X main.buildVersion=...").
var buildVersion string

// version is the stamped version, else the module version or VCS revision
// of a source build.
func version() string {
	v := buildVersion
	if bi, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
				v = s.Value
			}
		}
	}
	if v == "" {
		v = "unknown"
	}
	return "edgefence " + v + " " + runtime.GOOS + "/" + runtime.GOARCH
}
