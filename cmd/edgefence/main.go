// Command edgefence is an MQTT edge broker for GPS trackers that turns raw
// position pings into trustworthy geofence transitions.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/internal/cmdhelp"
)

// Exit codes: a command that ran and failed, and a command line that was
// wrong (an unknown command or flag, a bad value), as package flag has it.
const (
	exitFailed = 1
	exitUsage  = 2
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

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

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

// rootUsage is the help of edgefence itself.
func rootUsage(root *ffcli.Command) string {
	var b strings.Builder
	b.WriteString("USAGE\n  " + root.ShortUsage + "\n\n" + cmdhelp.Wrap(root.LongHelp, 0, cmdhelp.Width) + "\n\nCOMMANDS\n")
	cmdhelp.WriteCommands(&b, root.Subcommands)
	b.WriteString("\nFLAGS\n  --version   print the version\n  --help      print this help\n\n" +
		"Run 'edgefence help <command>' (or 'edgefence <command> --help') for a command's flags.\n")
	return b.String()
}

// run runs the command line args and returns the exit code. A command's
// help goes to stdout when asked for; an error goes to stderr as the last
// line, after at most a hint, never buried above a page of help.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCommand()
	var usage bytes.Buffer // what package flag prints: help, and its errors
	var shown *ffcli.Command
	prepare(root.Subcommands, &usage, &shown)
	if len(args) == 0 {
		fmt.Fprint(stderr, rootUsage(root))
		return exitUsage
	}
	switch a := args[0]; {
	case isHelp(a):
		fmt.Fprint(stdout, rootUsage(root))
		return 0
	case a == "--version" || a == "-version":
		fmt.Fprintln(stdout, version())
		return 0
	case a == "help":
		return help(root, args[1:], stdout, stderr)
	case strings.HasPrefix(a, "-"):
		return usageError(stderr, "edgefence", fmt.Errorf("unknown flag %s", a))
	}
	cmd := cmdhelp.Find(root.Subcommands, args[0])
	if cmd == nil {
		return usageError(stderr, "edgefence", cmdhelp.Unknown(root.Subcommands, args[0]))
	}
	if err := cmd.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = stdout.Write(usage.Bytes())
			return 0
		}
		name := "edgefence " + cmd.Name
		if shown != nil {
			name = shown.FlagSet.Name()
		}
		return usageError(stderr, name, err)
	}
	if err := cmd.Run(ctx); err != nil {
		var cle commandLineError
		switch {
		case errors.Is(err, flag.ErrHelp): // a command needing a subcommand
			_, _ = stderr.Write(usage.Bytes())
			return exitUsage
		case errors.As(err, &cle):
			return usageError(stderr, cle.cmd, cle.err)
		}
		fmt.Fprintln(stderr, "edgefence:", err)
		return exitFailed
	}
	return 0
}

// prepare gives every command of the tree the wrapped help and a flag set
// that prints into usage, and records in *shown whose help was printed.
func prepare(cmds []*ffcli.Command, usage io.Writer, shown **ffcli.Command) {
	for _, c := range cmds {
		if c.FlagSet == nil {
			c.FlagSet = flag.NewFlagSet("edgefence "+c.Name, flag.ContinueOnError)
		}
		c.FlagSet.SetOutput(usage)
		render := c.UsageFunc
		if render == nil {
			render = usageFunc(nil)
		}
		c.UsageFunc = func(c *ffcli.Command) string {
			*shown = c
			return render(c)
		}
		prepare(c.Subcommands, usage, shown)
	}
}

// help is `edgefence help [command [subcommand]]`.
func help(root *ffcli.Command, path []string, stdout, stderr io.Writer) int {
	if len(path) == 0 || len(path) == 1 && isHelp(path[0]) {
		fmt.Fprint(stdout, rootUsage(root))
		return 0
	}
	cmd := root
	for _, name := range path {
		sub := cmdhelp.Find(cmd.Subcommands, name)
		if sub == nil {
			// The hint is the top-level help: 'edgefence help --help' is no help.
			return usageError(stderr, "edgefence", cmdhelp.Unknown(cmd.Subcommands, name))
		}
		cmd = sub
	}
	fmt.Fprintln(stdout, cmd.UsageFunc(cmd))
	return 0
}

// commandLineError is a mistake in the command line that a command
// finds itself, reported as package flag's are (exit 2).
type commandLineError struct {
	cmd string // "edgefence store"
	err error
}

func (e commandLineError) Error() string { return e.cmd + ": " + e.err.Error() }

// noArguments is the error of a command that takes no arguments and was
// given some: a wrong command line, as a wrong flag is.
func noArguments(cmd string, args []string) error {
	return commandLineError{"edgefence " + cmd, fmt.Errorf("takes no arguments, got %q", args)}
}

// usageError prints err and where to find the help, and returns the exit
// code of a wrong command line. ff's "error parsing commandline
// arguments:" says nothing the line does not.
func usageError(stderr io.Writer, name string, err error) int {
	msg := strings.TrimPrefix(err.Error(), "error parsing commandline arguments: ")
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name, msg, name)
	return exitUsage
}

func versionCommand() *ffcli.Command {
	return &ffcli.Command{
		Name:       "version",
		ShortUsage: "edgefence version (or edgefence --version)",
		ShortHelp:  "print the version",
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return noArguments("version", args)
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
