package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/internal/cmdhelp"
)

// raceEnabled is set by passwd_race_test.go: bcrypt at the production
// cost 12 takes seconds a hash under the race detector (this test's three
// took 10.7 s), so .ci/run runs the bcrypt case without it.
var raceEnabled bool

// What a script pipes in comes out as a hash line the user file accepts
// and Authenticate matches against that password, and no other.
func TestPasswdHashAuthenticates(t *testing.T) {
	for _, tc := range []struct {
		algorithm, stdin, password string
	}{
		{"bcrypt", "s3cret", "s3cret"}, // echo -n
		{"argon2id", "correct horse battery staple\n", "correct horse battery staple"}, // echo
	} {
		t.Run(tc.algorithm, func(t *testing.T) {
			if tc.algorithm == "bcrypt" && raceEnabled {
				t.Skip("bcrypt at cost 12 takes seconds a hash under -race: .ci/run runs this case without it (package auth covers bcrypt at a low cost under -race)")
			}
			var out bytes.Buffer
			if err := passwd(strings.NewReader(tc.stdin), &out, tc.algorithm); err != nil {
				t.Fatalf("passwd: %v", err)
			}
			line, ok := strings.CutSuffix(out.String(), "\n")
			if !ok || strings.Contains(line, "\n") {
				t.Fatalf("output %q: want one line", out.String())
			}
			f, err := auth.Parse(fmt.Appendf(nil, "users:\n  - username: truck-42\n    password: %q\n    role: device\n", line))
			if err != nil {
				t.Fatalf("the hash does not load: %v", err)
			}
			if u := f.Authenticate("truck-42", []byte(tc.password)); u == nil {
				t.Errorf("Authenticate(%q) = nil", tc.password)
			}
			if u := f.Authenticate("truck-42", []byte(tc.stdin+"x")); u != nil {
				t.Errorf("Authenticate accepts another password")
			}
		})
	}
}

func TestPasswdRejects(t *testing.T) {
	for _, tc := range []struct {
		name, stdin, algorithm, want string
	}{
		{"empty", "", "bcrypt", "empty password"},
		{"empty line", "\n", "bcrypt", "empty password"},
		{"two lines", "one\ntwo\n", "bcrypt", "more than one line"},
		{"blank second line", "one\n\n", "bcrypt", "more than one line"},
		{"huge input", strings.Repeat("x", 5000), "argon2id", "longer than 4096 bytes"},
		{"too long for bcrypt", strings.Repeat("x", 73), "bcrypt", "use argon2id"},
		{"unknown algorithm", "secret", "md5", "unknown hash algorithm"},
	} {
		var out bytes.Buffer
		err := passwd(strings.NewReader(tc.stdin), &out, tc.algorithm)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: passwd = %v, want an error containing %q", tc.name, err, tc.want)
		}
		if out.Len() > 0 {
			t.Errorf("%s: printed %q despite the error", tc.name, out.String())
		}
	}
	if err := passwd(iotest.ErrReader(iotest.ErrTimeout), new(bytes.Buffer), "bcrypt"); err == nil || !strings.Contains(err.Error(), "reading the password") {
		t.Errorf("read error: passwd = %v", err)
	}
}

// The subcommand is registered and refuses a password on the command line.
func TestPasswdCommandRefusesArguments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"passwd", "secret"}, &stdout, &stderr)
	if code != cmdhelp.ExitUsage || !strings.Contains(stderr.String(), "read from stdin") {
		t.Errorf("edgefence passwd secret: exit %d, %q", code, stderr.String())
	}
}
