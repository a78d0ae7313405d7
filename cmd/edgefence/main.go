// Command edgefence is an MQTT edge broker for GPS trackers that turns raw
// position pings into trustworthy geofence transitions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if slices.ContainsFunc(os.Args[1:], isHelp) {
				return // asked for: usage was printed
			}
			os.Exit(2) // no subcommand: usage was printed
		}
		fmt.Fprintln(os.Stderr, "edgefence:", err)
		os.Exit(1)
	}
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func run(ctx context.Context, args []string) error {
	root := &ffcli.Command{
		ShortUsage: "edgefence <subcommand> [flags]",
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
		Exec: func(context.Context, []string) error { return flag.ErrHelp },
	}
	return root.ParseAndRun(ctx, args)
}

func versionCommand() *ffcli.Command {
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "edgefence version",
		ShortHelp:  "print the version",
		Exec: func(context.Context, []string) error {
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
