package auth

import (
	"errors"
	"testing"
)

func TestRoleRoundTrip(t *testing.T) {
	for _, r := range Roles() {
		got, err := ParseRole(r.String())
		if err != nil || got != r {
			t.Errorf("ParseRole(%q) = %v, %v; want %v", r.String(), got, err, r)
		}
	}
	if s := Role(0).String(); s != "Role(0)" {
		t.Errorf("Role(0).String() = %q", s)
	}
}

func TestParseRoleRejects(t *testing.T) {
	for _, s := range []string{"", "Admin", "DEVICE", "root", " device", "Role(1)"} {
		if r, err := ParseRole(s); !errors.Is(err, ErrUnknownRole) {
			t.Errorf("ParseRole(%q) = %v, %v; want ErrUnknownRole", s, r, err)
		}
	}
}
