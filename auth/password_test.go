package auth

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// One line, without its line ending, is the password; spaces are part of
// it.
func TestReadPasswordReadsOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"secret":        "secret",
		"secret\n":      "secret",
		"secret\r\n":    "secret",
		" pass word \n": " pass word ",
		"tab\tin\n":     "tab\tin",
	} {
		got, err := ReadPassword(strings.NewReader(in))
		if err != nil || string(got) != want {
			t.Errorf("ReadPassword(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// What is not one line of password is refused, never cut to one.
func TestReadPasswordRejects(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "empty password",
		"\n":                      "empty password",
		"one\ntwo\n":              "more than one line",
		"one\n\n":                 "more than one line",
		strings.Repeat("x", 5000): "longer than 4096 bytes",
	} {
		if _, err := ReadPassword(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadPassword(%.20q) = %v, want an error containing %q", in, err, want)
		}
	}
	if _, err := ReadPassword(strings.NewReader("")); !errors.Is(err, ErrEmptyPassword) {
		t.Errorf("empty input: %v, want ErrEmptyPassword", err)
	}
	if _, err := ReadPassword(iotest.ErrReader(iotest.ErrTimeout)); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("read error: %v", err)
	}
}
