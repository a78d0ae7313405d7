package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/term"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/internal/cmdhelp"
)

func passwdCommand() *ffcli.Command {
	fs := flag.NewFlagSet("edgefence passwd", flag.ContinueOnError)
	algorithm := fs.String("algorithm", "bcrypt", "hash algorithm: bcrypt (cost 12; passwords up to 72 bytes) or argon2id (7 MiB, 5 passes, 1 lane: OWASP's least-memory setting)")
	return &ffcli.Command{
		Name:       "passwd",
		ShortUsage: "edgefence passwd [--algorithm bcrypt|argon2id] < password",
		ShortHelp:  "hash a password for the --auth user file",
		LongHelp: "Read a password from stdin (one line; its line ending is not part of it) and print\n" +
			"its hash, the password: value of a user in the --auth file. On a terminal it prompts\n" +
			"twice, without echo. In scripts: printf %s \"$PW\" | edgefence passwd",
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.UsageError{Cmd: "edgefence passwd", Err: fmt.Errorf("unexpected argument %q: the password is read from stdin, never from the command line (where ps would show it)", args[0])}
			}
			in := io.Reader(os.Stdin)
			if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
				pw, err := auth.PromptPassword(ctx, fd, os.Stderr)
				if err != nil {
					return fmt.Errorf("passwd: %w", err)
				}
				in = bytes.NewReader(pw)
			}
			return passwd(in, os.Stdout, *algorithm)
		},
	}
}

// passwd reads a password from r and writes its hash line to w.
func passwd(r io.Reader, w io.Writer, algorithm string) error {
	pw, err := auth.ReadPassword(r)
	if err != nil {
		return fmt.Errorf("passwd: %w", err)
	}
	h, err := auth.HashPassword(pw, algorithm)
	if err != nil {
		return fmt.Errorf("passwd: %w", err)
	}
	_, err = fmt.Fprintln(w, h)
	return err
}
