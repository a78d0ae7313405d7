package auth

import (
	"testing"
)

// FuzzParse: Parse never panics, and a file it accepts holds only users
// the broker can rely on: a valid role, a device name that is a single
// topic level, read_own only on devices, distinct names, all findable.
// It does not authenticate: a hash the fuzzer invents may legitimately
// cost up to the bounds (a second or more).
func FuzzParse(f *testing.F) {
	f.Add([]byte("users:\n  - username: truck-42\n    password: \"" + bcryptSecret + "\"\n    role: device\n"))
	f.Add([]byte("users:\n  - username: ops\n    password: '" + argonSecret + "'\n    role: admin\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if file != nil {
				t.Fatalf("Parse returned a file and an error: %v", err)
			}
			return
		}
		if file.Len() != len(file.users) {
			t.Fatalf("Len() = %d, %d users", file.Len(), len(file.users))
		}
		for i := range file.users {
			u := &file.users[i]
			if !u.Role.valid() {
				t.Fatalf("user %q: role %v", u.Name, u.Role)
			}
			if err := checkUsername(u.Name); err != nil {
				t.Fatalf("user %q: %v", u.Name, err)
			}
			if u.Role == RoleDevice {
				if err := checkDeviceName(u.Name); err != nil {
					t.Fatalf("device %q: %v", u.Name, err)
				}
			} else if u.ReadOwn {
				t.Fatalf("%v %q may read its own transitions", u.Role, u.Name)
			}
			if file.User(u.Name) != u {
				t.Fatalf("User(%q) does not find user %d", u.Name, i+1)
			}
		}
		if file.dummy == nil {
			t.Fatal("no dummy hash")
		}
	})
}
