package cmdhelp

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Exit codes of Program.Run: a command that ran and failed, and a
// command line that was wrong (an unknown command or flag, a bad value),
// as package flag has it.
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// Program is a command line program: its tree of commands, how their
// help looks, and its version.
type Program struct {
	Root *ffcli.Command
	// Style renders the help of a command without a UsageFunc of its own.
	Style Style
	// Version is what --version prints.
	Version func() string
}

// UsageError is a mistake in the command line that a command finds
// itself, reported as package flag's are (exit 2).
type UsageError struct {
	Cmd string // "edgefence store"
	Err error
}

func (e UsageError) Error() string { return e.Cmd + ": " + e.Err.Error() }

// NoArguments is the error of the command cmd ("edgefence serve"), which
// takes no arguments, given some: a wrong command line, as a wrong flag
// is.
func NoArguments(cmd string, args []string) error {
	return UsageError{cmd, fmt.Errorf("takes no arguments, got %q", args)}
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// Run runs the command line args and returns the exit code. A command's
// help goes to stdout when asked for; an error goes to stderr as the last
// line, after at most a hint, never buried above a page of help.
func (p Program) Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := p.Root
	var usage bytes.Buffer // what package flag prints: help, and its errors
	var shown *ffcli.Command
	p.prepare(root.Subcommands, &usage, &shown)
	if len(args) == 0 {
		fmt.Fprint(stderr, p.rootUsage())
		return ExitUsage
	}
	switch a := args[0]; {
	case isHelp(a):
		fmt.Fprint(stdout, p.rootUsage())
		return 0
	case a == "--version" || a == "-version":
		fmt.Fprintln(stdout, p.Version())
		return 0
	case a == "help":
		return p.help(args[1:], stdout, stderr)
	case strings.HasPrefix(a, "-"):
		return usageError(stderr, root.Name, fmt.Errorf("unknown flag %s", a))
	}
	cmd := Find(root.Subcommands, args[0])
	if cmd == nil {
		return usageError(stderr, root.Name, Unknown(root.Subcommands, args[0]))
	}
	if err := cmd.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = stdout.Write(usage.Bytes())
			return 0
		}
		name := root.Name + " " + cmd.Name
		if shown != nil {
			name = shown.FlagSet.Name()
		}
		return usageError(stderr, name, err)
	}
	if err := cmd.Run(ctx); err != nil {
		var ue UsageError
		switch {
		case errors.Is(err, flag.ErrHelp): // a command needing a subcommand
			_, _ = stderr.Write(usage.Bytes())
			return ExitUsage
		case errors.As(err, &ue):
			return usageError(stderr, ue.Cmd, ue.Err)
		}
		fmt.Fprintln(stderr, root.Name+":", err)
		return ExitFailed
	}
	return 0
}

// rootUsage is the help of the program itself.
func (p Program) rootUsage() string {
	root := p.Root
	var b strings.Builder
	b.WriteString("USAGE\n  " + root.ShortUsage + "\n\n" + Wrap(root.LongHelp, 0, Width) + "\n\nCOMMANDS\n")
	WriteCommands(&b, root.Subcommands)
	fmt.Fprintf(&b, "\nFLAGS\n  --version   print the version\n  --help      print this help\n\n"+
		"Run '%[1]s help <command>' (or '%[1]s <command> --help') for a command's flags.\n", root.Name)
	return b.String()
}

// prepare gives every command of the tree the wrapped help and a flag set
// that prints into usage, and records in *shown whose help was printed.
func (p Program) prepare(cmds []*ffcli.Command, usage io.Writer, shown **ffcli.Command) {
	for _, c := range cmds {
		if c.FlagSet == nil {
			c.FlagSet = flag.NewFlagSet(p.Root.Name+" "+c.Name, flag.ContinueOnError)
		}
		c.FlagSet.SetOutput(usage)
		render := c.UsageFunc
		if render == nil {
			render = p.Style.Usage(nil)
		}
		c.UsageFunc = func(c *ffcli.Command) string {
			*shown = c
			return render(c)
		}
		p.prepare(c.Subcommands, usage, shown)
	}
}

// help is `PROGRAM help [command [subcommand]]`.
func (p Program) help(path []string, stdout, stderr io.Writer) int {
	if len(path) == 0 || len(path) == 1 && isHelp(path[0]) {
		fmt.Fprint(stdout, p.rootUsage())
		return 0
	}
	cmd := p.Root
	for _, name := range path {
		sub := Find(cmd.Subcommands, name)
		if sub == nil {
			// The hint is the top-level help: 'PROGRAM help --help' is no help.
			return usageError(stderr, p.Root.Name, Unknown(cmd.Subcommands, name))
		}
		cmd = sub
	}
	fmt.Fprintln(stdout, cmd.UsageFunc(cmd))
	return 0
}

// usageError prints err and where to find the help, and returns the exit
// code of a wrong command line. ff's "error parsing commandline
// arguments:" says nothing the line does not.
func usageError(stderr io.Writer, name string, err error) int {
	msg := strings.TrimPrefix(err.Error(), "error parsing commandline arguments: ")
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name, msg, name)
	return ExitUsage
}
