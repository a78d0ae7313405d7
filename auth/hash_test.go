package auth

import (
	"errors"
	"strings"
	"testing"
)

// The production costs are what the documentation promises.
func TestProductionCosts(t *testing.T) {
	if prodBcryptCost != 12 {
		t.Errorf("bcrypt cost %d, want 12", prodBcryptCost)
	}
	if want := (argon2Params{memory: 7168, time: 5, threads: 1, saltLen: 16, keyLen: 32}); prodArgon2 != want {
		t.Errorf("argon2id %+v, want %+v", prodArgon2, want)
	}
}

func TestHashPasswordRoundTrip(t *testing.T) {
	for _, alg := range []string{"bcrypt", "argon2id"} {
		for _, pw := range []string{"secret", "ünïcödé pass phrase with spaces", strings.Repeat("x", 72)} {
			h, err := HashPassword([]byte(pw), alg)
			if err != nil {
				t.Fatalf("HashPassword(%s): %v", alg, err)
			}
			parsed, err := parseHash(h)
			if err != nil {
				t.Fatalf("parseHash(%q): %v", h, err)
			}
			if !parsed.verify([]byte(pw)) {
				t.Errorf("%s: hash of %q does not verify it", alg, pw)
			}
			if parsed.verify([]byte(pw+"x")) || parsed.verify([]byte(pw[1:])) {
				t.Errorf("%s: hash of %q verifies another password", alg, pw)
			}
			h2, _ := HashPassword([]byte(pw), alg)
			if h2 == h {
				t.Errorf("%s: two hashes of one password are equal: the salt is not random", alg)
			}
		}
	}
}

func TestHashPasswordFormat(t *testing.T) {
	h, err := HashPassword([]byte("secret"), "argon2id")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(h, "$")
	if len(f) != 6 || f[1] != "argon2id" || f[2] != "v=19" || f[3] != "m=64,t=1,p=1" || len(f[4]) != 22 || len(f[5]) != 43 {
		t.Errorf("argon2id hash %q: want $argon2id$v=19$m=64,t=1,p=1$<22 chars: 16 bytes>$<43 chars: 32 bytes>", h)
	}
	h, err = HashPassword([]byte("secret"), "bcrypt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$2a$04$") || len(h) != 60 {
		t.Errorf("bcrypt hash %q: want $2a$04$ and 60 characters", h)
	}
}

func TestHashPasswordRejects(t *testing.T) {
	for _, tc := range []struct {
		pw, alg string
		err     error
	}{
		{"", "bcrypt", ErrEmptyPassword},
		{"", "argon2id", ErrEmptyPassword},
		{"secret", "md5", ErrUnknownAlgorithm},
		{"secret", "", ErrUnknownAlgorithm},
		{"secret", "Bcrypt", ErrUnknownAlgorithm},
		{strings.Repeat("x", 73), "bcrypt", ErrPasswordTooLong},
	} {
		if h, err := HashPassword([]byte(tc.pw), tc.alg); !errors.Is(err, tc.err) {
			t.Errorf("HashPassword(%d bytes, %q) = %q, %v; want %v", len(tc.pw), tc.alg, h, err, tc.err)
		}
	}
	if _, err := HashPassword([]byte(strings.Repeat("x", 1000)), "argon2id"); err != nil {
		t.Errorf("argon2id refuses a long password: %v", err)
	}
}

// bcrypt reads 72 bytes; a longer password whose first 72 bytes match a
// hash must not pass for it.
func TestBcryptRefusesLongPasswords(t *testing.T) {
	pw := strings.Repeat("x", 72)
	h, err := HashPassword([]byte(pw), "bcrypt")
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parseHash(h)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.verify([]byte(pw + "anything")) {
		t.Error("a 72-byte prefix plus more verifies")
	}
}

// The dummy of a hash costs the same (same class) and matches nothing
// the real one does.
func TestDummy(t *testing.T) {
	for _, s := range []string{bcryptSecret, argonSecret} {
		h, err := parseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		d := h.dummy()
		if d.class() != h.class() {
			t.Errorf("dummy class %s, want %s", d.class(), h.class())
		}
		if d.verify([]byte("secret")) || d.verify(nil) {
			t.Errorf("dummy of %s verifies a password", h.class())
		}
	}
}

// A bcrypt dummy is a well-formed hash, so verifying it does the full work
// rather than failing fast on a parse error.
func TestDummyBcryptWellFormed(t *testing.T) {
	for range 100 {
		d := dummyBcrypt(bcryptMinCost)
		if _, err := parseBcrypt(string(d.raw)); err != nil {
			t.Fatalf("dummy %q: %v", d.raw, err)
		}
	}
}
