package auth

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A users file may set per-role publish limits; roles it leaves out have
// none from the file (the server's defaults apply).
func TestLimitsPerRole(t *testing.T) {
	f := mustParse(t, fmt.Sprintf(`
limits:
  device:  {rate: 2.5, burst: 10}
  gateway: {rate: 500, burst: 1000}
  admin:   {rate: 0}
users:
  - username: gw
    password: %q
    role: gateway
`, argonSecret))
	for _, c := range []struct {
		r    Role
		want Limit
		ok   bool
	}{
		{RoleDevice, Limit{2.5, 10}, true},
		{RoleGateway, Limit{500, 1000}, true},
		{RoleAdmin, Limit{0, 0}, true},
		{RoleDashboard, Limit{}, false},
	} {
		if l, ok := f.Limit(c.r); l != c.want || ok != c.ok {
			t.Errorf("Limit(%s) = %+v, %v; want %+v, %v", c.r, l, ok, c.want, c.ok)
		}
	}
	if !f.HasLimits() {
		t.Error("HasLimits() = false")
	}
	if u := f.User("gw"); u == nil || u.Role != RoleGateway {
		t.Errorf("gw: %+v, want role gateway", u)
	}
	if mustParse(t, "users: []\n").HasLimits() {
		t.Error("a file without limits HasLimits")
	}
}

func TestLimitsRefused(t *testing.T) {
	for _, c := range []struct{ name, limits, want string }{
		{"unknown role", "limits:\n  root: {rate: 1, burst: 1}\n", `unknown role "root"`},
		{"not a mapping", "limits: 5\n", "limits must be a mapping"},
		{"no rate", "limits:\n  device: {burst: 1}\n", "limits.device needs a rate"},
		{"negative rate", "limits:\n  device: {rate: -1, burst: 1}\n", "rate must be 0 or more"},
		{"no burst", "limits:\n  device: {rate: 5}\n", "limits.device needs a burst"},
		{"unknown key", "limits:\n  device: {rate: 5, burst: 5, per: minute}\n", `unknown key "per"`},
		{"twice", "limits:\n  device: {rate: 5, burst: 5}\n  device: {rate: 1, burst: 1}\n", "device"},
	} {
		_, err := Parse([]byte(c.limits + "users: []\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// An Argon2id hash that would make each login allocate more than
// MaxArgon2Memory is refused at load, naming the user and the cap, and
// saying how to make a fitting one.
func TestArgon2MemoryCap(t *testing.T) {
	salt, key := "c29tZXNhbHRzb21lc2FsdA", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	fits := fmt.Sprintf("$argon2id$v=19$m=%d,t=3,p=2$%s$%s", MaxArgon2Memory, salt, key)
	over := fmt.Sprintf("$argon2id$v=19$m=%d,t=3,p=2$%s$%s", MaxArgon2Memory+1, salt, key)
	mustParse(t, fmt.Sprintf("users:\n  - username: ok\n    role: admin\n    password: %q\n", fits))
	_, err := Parse([]byte(fmt.Sprintf("users:\n  - username: ok\n    role: admin\n    password: %q\n  - username: greedy\n    role: device\n    password: %q\n", fits, over)))
	if !errors.Is(err, ErrHashTooCostly) {
		t.Fatalf("Parse: %v, want ErrHashTooCostly", err)
	}
	for _, want := range []string{`"greedy"`, "65537 KiB", "65536 KiB (64 MiB)", "edgefence passwd --algorithm argon2id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A bcrypt file verifies on every core; an Argon2id one as many hashes
// at once as fit in the verification budget, at least one.
func TestVerifySlots(t *testing.T) {
	salt, key := "c29tZXNhbHRzb21lc2FsdA", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
	argon := func(kib int) string {
		return fmt.Sprintf("users:\n  - username: u\n    role: admin\n    password: %q\n", fmt.Sprintf("$argon2id$v=19$m=%d,t=1,p=1$%s$%s", kib, salt, key))
	}
	for _, c := range []struct {
		name  string
		file  string
		procs int
		want  int
	}{
		{"bcrypt", fmt.Sprintf("users:\n  - username: u\n    role: admin\n    password: %q\n", bcryptSecret), 4, 4},
		{"argon2id 1 MiB", argon(1 << 10), 4, 4},
		{"argon2id 4 MiB", argon(4 << 10), 4, 2},
		{"argon2id 7 MiB (passwd's)", argon(7 << 10), 4, 1},
		{"argon2id 64 MiB", argon(64 << 10), 4, 1},
		{"one core", argon(1 << 10), 1, 1},
	} {
		if got := mustParse(t, c.file).VerifySlots(c.procs); got != c.want {
			t.Errorf("%s on %d cores: VerifySlots = %d, want %d", c.name, c.procs, got, c.want)
		}
	}
}

// Cached answers only for a password already verified; Verify always
// hashes once and fills the cache on success.
func TestCachedAndVerify(t *testing.T) {
	f := mustParse(t, fmt.Sprintf("users:\n  - username: u\n    role: admin\n    password: %q\n", argonSecret))
	if f.Cached("u", []byte("secret")) != nil {
		t.Error("Cached before any verification")
	}
	if f.Verify("u", []byte("wrong")) != nil || f.Verify("nobody", []byte("secret")) != nil {
		t.Error("Verify accepted a wrong password or an unknown user")
	}
	if f.Verify("u", []byte("secret")) == nil {
		t.Fatal("Verify refused the right password")
	}
	if f.Cached("u", []byte("secret")) == nil || f.Cached("u", []byte("wrong")) != nil {
		t.Error("Cached after a verification: want the right password only")
	}
}
