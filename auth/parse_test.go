package auth

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file as an operator writes it: every role, both hash kinds, the three
// bcrypt prefixes, a certificate-only device, comments.
func TestParseOperatorFile(t *testing.T) {
	b := bcryptSecret[4:] // after "$2a$"
	f := mustParse(t, fmt.Sprintf(`# edgefence users
users:
  - username: truck-42
    password: "%s"
    role: device
    read_own_transitions: true
  - username: truck-43
    password: "$2b$%s"
    role: device
  - username: truck-44
    password: '$2y$%s'
    role: device
    read_own_transitions: false
  - username: dashboard
    password: "%s"
    role: dashboard
  - username: ops/night shift   # not a device: any MQTT username
    password: "%s"
    role: admin
  - username: gateway-7
    role: device                  # certificate only
  - username: ünïcödé-ß
    role: device
    password: ~
`, bcryptSecret, b, b, argonDash, argonSecret))
	want := []struct {
		name    string
		role    Role
		readOwn bool
		pw      bool
	}{
		{"truck-42", RoleDevice, true, true},
		{"truck-43", RoleDevice, false, true},
		{"truck-44", RoleDevice, false, true},
		{"dashboard", RoleDashboard, false, true},
		{"ops/night shift", RoleAdmin, false, true},
		{"gateway-7", RoleDevice, false, false},
		{"ünïcödé-ß", RoleDevice, false, false},
	}
	if f.Len() != len(want) {
		t.Fatalf("Len() = %d, want %d", f.Len(), len(want))
	}
	for _, w := range want {
		u := f.User(w.name)
		if u == nil {
			t.Errorf("User(%q) = nil", w.name)
			continue
		}
		if u.Name != w.name || u.Role != w.role || u.ReadOwn != w.readOwn || u.HasPassword() != w.pw {
			t.Errorf("User(%q) = %+v, want role %v, read own %v, password %v", w.name, *u, w.role, w.readOwn, w.pw)
		}
	}
	for _, name := range []string{"truck-42", "truck-43", "truck-44", "ops/night shift"} {
		if u := f.Authenticate(name, []byte("secret")); u == nil || u.Name != name {
			t.Errorf("Authenticate(%q, secret) = %v", name, u)
		}
	}
	if u := f.Authenticate("dashboard", []byte("dashpass")); u == nil {
		t.Error("Authenticate(dashboard, dashpass) = nil")
	}
	if u := f.User("truck-4"); u != nil {
		t.Errorf("User(truck-4) = %+v, want nil", *u)
	}
}

// Files with nobody in them are valid: they let nobody in.
func TestParseEmpty(t *testing.T) {
	for name, yaml := range map[string]string{
		"empty file":    "",
		"comments only": "# nobody yet\n",
		"empty list":    "users: []\n",
		"null list":     "users:\n",
		"null document": "~\n",
		"merged empty":  "<<: {users: []}\n",
	} {
		f, err := Parse([]byte(yaml))
		if err != nil || f.Len() != 0 {
			t.Errorf("%s: Parse = %v, %v; want 0 users", name, f, err)
			continue
		}
		if u := f.Authenticate("ops", []byte("secret")); u != nil {
			t.Errorf("%s: Authenticate = %+v, want nil", name, *u)
		}
	}
}

// YAML anchors and merge keys work, and the keys they merge in are checked.
func TestParseMergeKeys(t *testing.T) {
	f := mustParse(t, fmt.Sprintf(`
users:
  - &truck
    username: truck-1
    password: "%s"
    role: device
    read_own_transitions: true
  - <<: *truck
    username: truck-2
`, bcryptSecret))
	if u := f.User("truck-2"); u == nil || u.Role != RoleDevice || !u.ReadOwn || !u.HasPassword() {
		t.Errorf("User(truck-2) = %+v", u)
	}
	_, err := Parse([]byte(`
users:
  - <<: {role: device, colour: red}
    username: truck-1
`))
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "colour") {
		t.Errorf("unknown key in a merged mapping: err = %v", err)
	}
}

// Every refusal says which user and what is wrong, and never repeats a
// plaintext password.
func TestParseRejects(t *testing.T) {
	salt, key := strings.Repeat("A", 22), strings.Repeat("A", 43) // 16 and 32 zero bytes
	argon := func(params string) string { return "$argon2id$v=19$" + params + "$" + salt + "$" + key }
	bcryptAt := func(cost string) string { return "$2a$" + cost + bcryptSecret[6:] }
	one := func(name, password, role string) string {
		return fmt.Sprintf("users:\n  - username: ok\n    role: admin\n  - username: %q\n    password: %q\n    role: %s\n", name, password, role)
	}
	for _, tc := range []struct {
		name string
		yaml string
		err  error    // nil: any error
		want []string // in the message
	}{
		{"plaintext password", one("truck-42", "hunter2", "device"), ErrNotHash, []string{`user 2 ("truck-42", line 4)`, "edgefence passwd", "not plaintext"}},
		{"plaintext that looks numeric", "users:\n  - username: truck-42\n    password: 123456\n    role: device\n", ErrNotHash, []string{"truck-42"}},
		{"empty password", one("truck-42", "", "device"), ErrNotHash, []string{"truck-42", "certificate-only"}},
		{"unsupported scheme", one("truck-42", "$1$salt$hunter2", "device"), ErrNotHash, []string{"truck-42", "$1$"}},
		{"argon2i", one("truck-42", "$argon2i$v=19$m=65536,t=3,p=2$"+salt+"$"+key, "device"), ErrNotHash, []string{"truck-42", "$argon2i$"}},
		{"unknown user key", "users:\n  - username: truck-42\n    passwd: x\n    role: device\n", ErrUnknownKey, []string{"truck-42", `"passwd"`, "line 3"}},
		{"unknown top-level key", "users: []\nuserz: []\n", ErrUnknownKey, []string{`"userz"`, "line 2"}},
		{"users twice", "users: []\nusers: []\n", nil, []string{"users", "twice"}},
		{"key twice", "users:\n  - username: a\n    role: admin\n    role: device\n", nil, []string{"already defined"}},
		{"duplicate user", "users:\n  - username: truck-42\n    role: device\n  - username: ops\n    role: admin\n  - username: truck-42\n    role: admin\n", ErrDuplicateUser, []string{`user 3 ("truck-42", line 6)`, "also user 1 (line 2)"}},
		{"empty username", one("", bcryptSecret, "admin"), ErrInvalidUsername, []string{"user 2", "required"}},
		{"missing username", "users:\n  - role: admin\n", ErrInvalidUsername, []string{"user 1", "required"}},
		{"device name with /", one("fleet/truck-42", bcryptSecret, "device"), ErrInvalidUsername, []string{`"fleet/truck-42"`, "topic level", "'/'"}},
		{"device name +", one("+", bcryptSecret, "device"), ErrInvalidUsername, []string{`"+"`, "topic level"}},
		{"device name #", one("truck#1", bcryptSecret, "device"), ErrInvalidUsername, []string{`"truck#1"`}},
		{"device name $", one("$SYS", bcryptSecret, "device"), ErrInvalidUsername, []string{`"$SYS"`, "'$'"}},
		{"device name NUL", one("truck\x0042", bcryptSecret, "device"), ErrInvalidUsername, []string{"NUL"}},
		{"device name too long", one(strings.Repeat("t", 129), bcryptSecret, "device"), ErrInvalidUsername, []string{"128 bytes"}},
		{"admin name NUL", one("ops\x00", bcryptSecret, "admin"), ErrInvalidUsername, []string{"NUL"}},
		{"read_own on dashboard", "users:\n  - username: dash\n    role: dashboard\n    read_own_transitions: true\n", ErrReadOwnNotDevice, []string{`"dash"`, "not dashboard"}},
		{"read_own on admin", "users:\n  - username: ops\n    role: admin\n    read_own_transitions: true\n", ErrReadOwnNotDevice, []string{`"ops"`}},
		{"unknown role", one("ops", bcryptSecret, "superuser"), ErrUnknownRole, []string{`"ops"`, `"superuser"`, "device, gateway, dashboard or admin"}},
		{"capitalised role", one("ops", bcryptSecret, "Admin"), ErrUnknownRole, []string{`"Admin"`}},
		{"missing role", "users:\n  - username: ops\n", ErrMissingRole, []string{`"ops"`, "role is required"}},
		{"argon2 without t", one("dash", "$argon2id$v=19$m=65536,p=2$"+salt+"$"+key, "dashboard"), ErrBadHash, []string{`"dash"`, "m=<KiB>,t=<passes>,p=<lanes>"}},
		{"argon2 params out of order", one("dash", argon("t=3,m=65536,p=2"), "dashboard"), ErrBadHash, []string{`"dash"`}},
		{"argon2 old version", one("dash", "$argon2id$v=16$m=65536,t=3,p=2$"+salt+"$"+key, "dashboard"), ErrBadHash, []string{"v=19"}},
		{"argon2 no version", one("dash", "$argon2id$m=65536,t=3,p=2$"+salt+"$"+key, "dashboard"), ErrBadHash, []string{`"dash"`}},
		{"argon2 padded salt", one("dash", "$argon2id$v=19$m=65536,t=3,p=2$"+salt+"==$"+key, "dashboard"), ErrBadHash, []string{"salt"}},
		{"argon2 short salt", one("dash", "$argon2id$v=19$m=65536,t=3,p=2$AAAA$"+key, "dashboard"), ErrBadHash, []string{"salt"}},
		{"argon2 short key", one("dash", "$argon2id$v=19$m=65536,t=3,p=2$"+salt+"$AAAA", "dashboard"), ErrBadHash, []string{"key"}},
		{"argon2 trailing field", one("dash", argon("m=65536,t=3,p=2")+"$x", "dashboard"), ErrBadHash, []string{`"dash"`}},
		{"argon2 4 GiB", one("dash", argon("m=4194304,t=3,p=2"), "dashboard"), ErrBadHash, []string{`"dash"`, "m=4194304"}},
		{"argon2 1000 passes", one("dash", argon("m=65536,t=1000,p=2"), "dashboard"), ErrBadHash, []string{"t=1000"}},
		{"argon2 0 passes", one("dash", argon("m=65536,t=0,p=2"), "dashboard"), ErrBadHash, []string{"t=0"}},
		{"argon2 255 lanes", one("dash", argon("m=65536,t=3,p=255"), "dashboard"), ErrBadHash, []string{"p=255"}},
		{"argon2 0 lanes", one("dash", argon("m=65536,t=3,p=0"), "dashboard"), ErrBadHash, []string{"p=0"}},
		{"argon2 memory below 8 per lane", one("dash", argon("m=8,t=3,p=2"), "dashboard"), ErrBadHash, []string{"m=8"}},
		{"argon2 huge number", one("dash", argon("m=99999999999999999999,t=3,p=2"), "dashboard"), ErrBadHash, []string{`"dash"`}},
		{"bcrypt cost 15", one("truck-42", bcryptAt("15"), "device"), ErrBadHash, []string{`"truck-42"`, "cost 15"}},
		{"bcrypt cost 31", one("truck-42", bcryptAt("31"), "device"), ErrBadHash, []string{"cost 31"}},
		{"bcrypt cost 3", one("truck-42", bcryptAt("03"), "device"), ErrBadHash, []string{"cost 3"}},
		{"bcrypt cost not digits", one("truck-42", bcryptAt("+9"), "device"), ErrBadHash, []string{"two digits"}},
		{"bcrypt truncated", one("truck-42", bcryptSecret[:59], "device"), ErrBadHash, []string{"60"}},
		{"bcrypt bad character", one("truck-42", bcryptSecret[:59]+"!", "device"), ErrBadHash, []string{"alphabet"}},
		{"entry not a mapping", "users:\n  - truck-42\n", nil, []string{"user 1", "line 2", "not a mapping"}},
		{"username a list", "users:\n  - username: [a, b]\n    role: admin\n", nil, []string{"user 1", "cannot unmarshal !!seq into string"}},
		{"users not a list", "users: truck-42\n", nil, []string{"users must be a list"}},
		{"null entry", "users:\n  - ~\n", nil, []string{"user 1", "not a mapping"}},
		{"merged users not a list", "<<: {users: 1}\n", nil, []string{"users must be a list"}},
		{"file a list", "- username: ops\n", nil, []string{"mapping with a users list"}},
		{"two documents", "users: []\n---\nusers: []\n", nil, []string{"second YAML document"}},
		{"syntax error", "users: [\n", nil, []string{"yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted it (%d users)\n%s", f.Len(), tc.yaml)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("err = %v\nwant errors.Is %v", err, tc.err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("err = %v\nwant it to contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "123456") {
				t.Errorf("err = %v: repeats the plaintext password", msg)
			}
			var ue *UserError
			if errors.As(err, &ue) && (ue.Index < 1 || ue.Line < 1) {
				t.Errorf("UserError %+v: index and line must be set", *ue)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(good, []byte("users:\n  - username: ops\n    password: '"+argonSecret+"'\n    role: admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(good)
	if err != nil || f.User("ops") == nil {
		t.Fatalf("Load = %v, %v", f, err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("users:\n  - username: ops\n    password: hunter2\n    role: admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	var ue *UserError
	if !errors.As(err, &ue) || ue.Name != "ops" || ue.Index != 1 || !errors.Is(err, ErrNotHash) {
		t.Errorf("Load(bad) = %v; want a *UserError for user 1 (ops) wrapping ErrNotHash", err)
	}
	if want := "auth file " + bad + `: user 1 ("ops", line 2): `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load(bad) = %v; want prefix %q", err, want)
	}

	missing := filepath.Join(dir, "missing.yaml")
	if _, err := Load(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v; want ErrNotExist naming the path", err)
	}
}
