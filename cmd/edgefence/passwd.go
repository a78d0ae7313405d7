package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/term"

	"github.com/edgefence/edgefence/auth"
)

// maxPasswordInput bounds what passwd reads, so that a wrong pipe (a file,
// /dev/zero) is refused rather than hashed or read forever.
const maxPasswordInput = 4096

func passwdCommand() *ffcli.Command {
	fs := flag.NewFlagSet("edgefence passwd", flag.ContinueOnError)
	algorithm := fs.String("algorithm", "bcrypt", "hash algorithm: bcrypt (cost 12; passwords up to 72 bytes) or argon2id (64 MiB, 3 passes)")
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
				return fmt.Errorf("passwd: unexpected argument %q: the password is read from stdin, never from the command line (where ps would show it)", args[0])
			}
			in := io.Reader(os.Stdin)
			if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
				pw, err := promptPassword(ctx, fd, os.Stderr)
				if err != nil {
					return err
				}
				in = bytes.NewReader(pw)
			}
			return passwd(in, os.Stdout, *algorithm)
		},
	}
}

// passwd reads a password from r and writes its hash line to w.
func passwd(r io.Reader, w io.Writer, algorithm string) error {
	pw, err := readPassword(r)
	if err != nil {
		return err
	}
	h, err := auth.HashPassword(pw, algorithm)
	if err != nil {
		return fmt.Errorf("passwd: %w", err)
	}
	_, err = fmt.Fprintln(w, h)
	return err
}

// readPassword reads one line, without its "\n" or "\r\n". More than one
// line is refused: silently hashing only the first would leave the
// operator with a password they did not mean.
func readPassword(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPasswordInput+1))
	if err != nil {
		return nil, fmt.Errorf("passwd: reading the password: %w", err)
	}
	if len(data) > maxPasswordInput {
		return nil, fmt.Errorf("passwd: input longer than %d bytes: want one line, the password", maxPasswordInput)
	}
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case len(rest) > 0:
		return nil, errors.New("passwd: more than one line on stdin: want one line, the password")
	case len(line) == 0:
		return nil, errors.New("passwd: empty password")
	}
	return line, nil
}

// promptPassword reads a password typed on the terminal fd without echo,
// twice, prompting on prompt, so that a typo does not lock a device out.
func promptPassword(ctx context.Context, fd int, prompt io.Writer) ([]byte, error) {
	pw, err := promptOnce(ctx, fd, prompt, "Password: ")
	if err != nil {
		return nil, err
	}
	again, err := promptOnce(ctx, fd, prompt, "Again: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		return nil, errors.New("passwd: the passwords differ")
	}
	return pw, nil
}

// promptOnce reads one password without echo. main catches SIGINT into
// ctx, so Ctrl-C would not interrupt the read: on ctx's end the echo is
// restored here and the read abandoned (the process is about to exit).
func promptOnce(ctx context.Context, fd int, prompt io.Writer, label string) ([]byte, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("passwd: terminal: %w", err)
	}
	fmt.Fprint(prompt, label)
	type result struct {
		pw  []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		done <- result{pw, err}
	}()
	select {
	case r := <-done:
		fmt.Fprintln(prompt) // the Enter was not echoed
		if r.err != nil {
			return nil, fmt.Errorf("passwd: reading the password: %w", r.err)
		}
		return r.pw, nil
	case <-ctx.Done():
		term.Restore(fd, state)
		fmt.Fprintln(prompt)
		return nil, errors.New("passwd: interrupted")
	}
}
