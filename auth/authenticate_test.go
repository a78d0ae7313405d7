package auth

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fleetFile has a bcrypt device, an argon2id dashboard, an argon2id admin
// and a certificate-only device.
func fleetFile(t testing.TB) *File {
	return mustParse(t, fmt.Sprintf(`users:
  - username: truck-42
    password: "%s"
    role: device
  - username: dash
    password: "%s"
    role: dashboard
  - username: ops
    password: "%s"
    role: admin
  - username: gateway-7
    role: device
`, bcryptSecret, argonDash, argonSecret))
}

// countingHash counts verifications, to tell the cached path from the
// slow one and to see that unknown users pay for a dummy.
type countingHash struct {
	hash
	n *atomic.Int64
}

func (h countingHash) verify(pw []byte) bool {
	h.n.Add(1)
	return h.hash.verify(pw)
}

// count wraps the hash of user name (or the dummy, for "") in a counter.
func count(f *File, name string) *atomic.Int64 {
	n := new(atomic.Int64)
	if name == "" {
		f.dummy = countingHash{f.dummy, n}
		return n
	}
	u := &f.users[f.byName[name]]
	u.hash = countingHash{u.hash, n}
	return n
}

func TestAuthenticate(t *testing.T) {
	f := fleetFile(t)
	for _, tc := range []struct {
		user, pw string
		want     string // "": nil
	}{
		{"truck-42", "secret", "truck-42"}, // bcrypt
		{"dash", "dashpass", "dash"},       // argon2id
		{"ops", "secret", "ops"},           // argon2id
		{"truck-42", "Secret", ""},         // wrong password
		{"truck-42", "secret\n", ""},       // a newline is part of the password
		{"truck-42", "", ""},               // empty password
		{"dash", "secret", ""},             // another user's password
		{"ops", "dashpass", ""},            // another user's password
		{"nobody", "secret", ""},           // unknown user
		{"", "secret", ""},                 // no username
		{"TRUCK-42", "secret", ""},         // names are case-sensitive
		{"gateway-7", "", ""},              // certificate only
		{"gateway-7", "secret", ""},        // certificate only
		{"truck-42", strings.Repeat("x", 100_000), ""},
	} {
		// Twice: the second answer may come from the cache.
		for pass := range 2 {
			u := f.Authenticate(tc.user, []byte(tc.pw))
			switch {
			case tc.want == "" && u != nil:
				t.Errorf("pass %d: Authenticate(%q, %q) = %q, want nil", pass, tc.user, tc.pw, u.Name)
			case tc.want != "" && (u == nil || u.Name != tc.want || u != f.User(tc.want)):
				t.Errorf("pass %d: Authenticate(%q, %q) = %v, want %q", pass, tc.user, tc.pw, u, tc.want)
			}
		}
	}
}

// After one correct login the next costs no slow hash; a wrong password
// takes the slow path, is refused and does not evict the right one.
func TestAuthenticateCache(t *testing.T) {
	for _, name := range []string{"truck-42", "ops"} {
		f := fleetFile(t)
		n := count(f, name)
		step := func(pw string, wantOK bool, wantSlow int64) {
			t.Helper()
			before := n.Load()
			u := f.Authenticate(name, []byte(pw))
			if (u != nil) != wantOK {
				t.Errorf("%s: Authenticate(%q) = %v, want ok %v", name, pw, u, wantOK)
			}
			if slow := n.Load() - before; slow != wantSlow {
				t.Errorf("%s: Authenticate(%q) verified %d times, want %d", name, pw, slow, wantSlow)
			}
		}
		step("wrong", false, 1)
		step("wrong", false, 1) // failures are never cached
		step("secret", true, 1)
		step("secret", true, 0) // cached
		step("wrong", false, 1) // a wrong password after a correct one
		step("secret", true, 0) // still cached: the failure evicted nothing
		step("", false, 1)
	}
}

// Unknown and password-less users are verified against the dummy, so they
// cost what a wrong password does.
func TestAuthenticateUnknownPaysDummy(t *testing.T) {
	f := fleetFile(t)
	n := count(f, "")
	for _, name := range []string{"nobody", "gateway-7", ""} {
		before := n.Load()
		if u := f.Authenticate(name, []byte("secret")); u != nil {
			t.Errorf("Authenticate(%q) = %v", name, u)
		}
		if n.Load()-before != 1 {
			t.Errorf("Authenticate(%q): dummy verified %d times, want 1", name, n.Load()-before)
		}
	}
	for _, name := range []string{"truck-42", "ops"} {
		before := n.Load()
		f.Authenticate(name, []byte("wrong"))
		if n.Load() != before {
			t.Errorf("Authenticate(%q): a known user paid the dummy", name)
		}
	}
}

// The dummy costs what most users' hashes cost.
func TestDummyFollowsTheMajority(t *testing.T) {
	f := fleetFile(t) // 1 bcrypt, 2 argon2id of one class
	a, _ := parseHash(argonSecret)
	if got := f.dummy.class(); got != a.class() {
		t.Errorf("dummy class %s, want %s", got, a.class())
	}
	f = mustParse(t, "users:\n  - username: gateway-7\n    role: device\n")
	if got, want := f.dummy.class(), "bcrypt/"+fmt.Sprint(bcryptCost); got != want {
		t.Errorf("no passwords: dummy class %s, want %s", got, want)
	}
}

// Many clients log in at once, right and wrong, under -race.
func TestAuthenticateConcurrent(t *testing.T) {
	f := fleetFile(t)
	logins := []struct {
		user, pw string
		ok       bool
	}{
		{"truck-42", "secret", true},
		{"truck-42", "wrong", false},
		{"ops", "secret", true},
		{"ops", "dashpass", false},
		{"dash", "dashpass", true},
		{"nobody", "secret", false},
		{"gateway-7", "", false},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				l := logins[(g+i)%len(logins)]
				if u := f.Authenticate(l.user, []byte(l.pw)); (u != nil) != l.ok || u != nil && u.Name != l.user {
					t.Errorf("Authenticate(%q, %q) = %v, want ok %v", l.user, l.pw, u, l.ok)
				}
			}
		})
	}
	wg.Wait()
}
