package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/term"
)

// MaxPasswordInput bounds what ReadPassword reads, so that a wrong pipe (a
// file, /dev/zero) is refused rather than hashed or read forever.
const MaxPasswordInput = 4096

// ReadPassword reads the password to hash from r: one line, without its
// "\n" or "\r\n". More than one line is refused: silently hashing only the
// first would leave the operator with a password they did not mean. An
// empty line is ErrEmptyPassword.
func ReadPassword(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPasswordInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the password: %w", err)
	}
	if len(data) > MaxPasswordInput {
		return nil, fmt.Errorf("input longer than %d bytes: want one line, the password", MaxPasswordInput)
	}
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case len(rest) > 0:
		return nil, errors.New("more than one line on stdin: want one line, the password")
	case len(line) == 0:
		return nil, ErrEmptyPassword
	}
	return line, nil
}

// PromptPassword reads a password typed on the terminal fd without echo,
// twice, prompting on prompt, so that a typo does not lock a device out.
// When ctx ends (the command's SIGINT) the terminal's echo is restored and
// the read abandoned.
func PromptPassword(ctx context.Context, fd int, prompt io.Writer) ([]byte, error) {
	pw, err := promptOnce(ctx, fd, prompt, "Password: ")
	if err != nil {
		return nil, err
	}
	again, err := promptOnce(ctx, fd, prompt, "Again: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		return nil, errors.New("the passwords differ")
	}
	return pw, nil
}

// promptOnce reads one password without echo. The command catches SIGINT
// into ctx, so Ctrl-C would not interrupt the read: on ctx's end the echo
// is restored here and the read abandoned (the process is about to exit).
func promptOnce(ctx context.Context, fd int, prompt io.Writer, label string) ([]byte, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
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
			return nil, fmt.Errorf("reading the password: %w", r.err)
		}
		return r.pw, nil
	case <-ctx.Done():
		term.Restore(fd, state)
		fmt.Fprintln(prompt)
		return nil, errors.New("interrupted")
	}
}
