package auth

import (
	"fmt"
	"strconv"
)

// Role decides what a user may publish and subscribe to.
type Role uint8

// The roles. The zero Role is invalid, so a User built without one is
// refused everything rather than granted the first role.
const (
	RoleDevice    Role = iota + 1 // a tracker: publishes only its own telemetry; reads nothing, or only its own transitions if ReadOwn
	RoleDashboard                 // read-only on the transition prefix, the late and reject topics
	RoleAdmin                     // everything (but never the server's own topics)
	RoleGateway                   // a gateway or backend forwarding trackers: publishes any device's telemetry; reads nothing
)

// roleNames are the roles as the user file spells them, indexed by Role.
var roleNames = [...]string{RoleDevice: "device", RoleDashboard: "dashboard", RoleAdmin: "admin", RoleGateway: "gateway"}

// Roles lists every role, in the order the user file documents them.
func Roles() []Role { return []Role{RoleDevice, RoleGateway, RoleDashboard, RoleAdmin} }

// String returns the role as the user file spells it.
func (r Role) String() string {
	if r.valid() {
		return roleNames[r]
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

func (r Role) valid() bool { return r >= RoleDevice && r <= RoleGateway }

// ParseRole parses a role as the user file spells it: "device",
// "gateway", "dashboard" or "admin" (lower case: the file is not a place for
// guesswork). The error wraps ErrUnknownRole.
func ParseRole(s string) (Role, error) {
	for r, name := range roleNames {
		if name != "" && name == s {
			return Role(r), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want device, gateway, dashboard or admin)", ErrUnknownRole, s)
}
