package cmdhelp

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// program is a tree of three commands: one that fails, one that finds its
// command line wrong, and one with a removed flag.
func program() Program {
	fs := flag.NewFlagSet("prog old", flag.ContinueOnError)
	fs.Int("n", 1, "a number")
	RegisterRemoved(fs, []*Removed{{Name: "gone", Bool: true, Advice: "ignored"}, {Name: "away", Fatal: true, Advice: "use --n"}})
	return Program{
		Root: &ffcli.Command{Name: "prog", ShortUsage: "prog <command>", LongHelp: "A program.", Subcommands: []*ffcli.Command{
			{Name: "fail", ShortHelp: "fails", Exec: func(context.Context, []string) error { return errors.New("it broke") }},
			{Name: "strict", ShortHelp: "takes no arguments", Exec: func(_ context.Context, args []string) error {
				if len(args) > 0 {
					return NoArguments("prog strict", args)
				}
				return nil
			}},
			{Name: "old", ShortHelp: "has removed flags", FlagSet: fs, Exec: func(context.Context, []string) error {
				return CheckRemoved(fs, slog.New(slog.DiscardHandler))
			}},
		}},
		Version: func() string { return "prog 1.0" },
	}
}

// Help goes to stdout when asked for, exit 0; a wrong command line is
// exit 2 with its error and a hint, the last lines on stderr; a failed
// command is exit 1 with its error.
func TestRunHelpAndErrors(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, last string // what stdout holds, and stderr's last line
	}{
		{nil, ExitUsage, "", "Run 'prog help <command>' (or 'prog <command> --help') for a command's flags."},
		{[]string{"--help"}, 0, "COMMANDS", ""},
		{[]string{"--version"}, 0, "prog 1.0", ""},
		{[]string{"help", "old"}, 0, "--n int", ""},
		{[]string{"old", "--help"}, 0, "--n int", ""},
		{[]string{"fial"}, ExitUsage, "", "Run 'prog --help' for usage."},
		{[]string{"old", "--m"}, ExitUsage, "", "Run 'prog old --help' for usage."},
		{[]string{"strict", "x"}, ExitUsage, "", "Run 'prog strict --help' for usage."},
		{[]string{"fail"}, ExitFailed, "", "prog: it broke"},
		{[]string{"old", "--gone"}, 0, "", ""},
		{[]string{"old", "--away", "x"}, ExitFailed, "", "prog: --away was removed: use --n"},
	} {
		var stdout, stderr bytes.Buffer
		code := program().Run(t.Context(), tc.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || tc.stdout == "" && stdout.Len() > 0 || lines[len(lines)-1] != tc.last {
			t.Errorf("prog %q: exit %d, stdout %q, stderr %q; want %d, stdout with %q, stderr ending %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.last)
		}
	}
	var stdout bytes.Buffer
	program().Run(t.Context(), []string{"old", "--help"}, &stdout, new(bytes.Buffer))
	if strings.Contains(stdout.String(), "gone") || strings.Contains(stdout.String(), "away") {
		t.Errorf("the help offers a removed flag:\n%s", stdout.String())
	}
}
