// Package auth reads the broker's user file: who may connect, how they
// prove it, and which role decides what they may publish and read.
//
// The file (serve --auth FILE) is YAML:
//
//	users:
//	  - username: truck-42
//	    password: "$2a$12$..."        # bcrypt ($2a$/$2b$/$2y$) or $argon2id$... — never plaintext
//	    role: device
//	    read_own_transitions: true    # optional, device only
//	  - username: dashboard
//	    password: "$argon2id$v=19$m=7168,t=5,p=1$..."
//	    role: dashboard
//	  - username: ops
//	    password: "..."
//	    role: admin
//	  - username: gateway-7
//	    role: device                  # no password: may only log in with a client certificate whose CN is gateway-7
//
// Roles:
//
//   - device: a tracker. It publishes only its own telemetry and reads
//     nothing, or only its own transitions with read_own_transitions. Its
//     username is its device id, so it must be a valid single MQTT topic
//     level: non-empty, at most 128 bytes of UTF-8, without '/', '+', '#'
//     or NUL, and not starting with '$'.
//   - gateway: a gateway or backend forwarding trackers: publishes the
//     telemetry of any device, reads nothing. Its publishes are rate
//     limited per device (see hooks.RateLimit).
//   - dashboard: reads the transition, late and reject topics.
//   - admin: everything except publishing on the server's own topics.
//
// Passwords are stored only as hashes: bcrypt (cost 4 to 14) or argon2id
// in the PHC string format, $argon2id$v=19$m=KiB,t=passes,p=lanes$salt$key
// with unpadded standard base64 (m at most 64 MiB, t at most 10, p at most
// 16). `edgefence passwd` makes either. bcrypt reads only the first 72
// bytes of a password, so a longer password is refused rather than
// truncated; use argon2id for long passwords.
//
// Loading fails, naming the user, on a plaintext or unrecognised password,
// an unknown key, a duplicate or invalid username, a missing or unknown
// role, read_own_transitions on a role other than device, or a malformed
// or implausibly expensive hash. A user without a password exists only for
// client-certificate authentication (certificate CN = username). An empty
// user list is valid and lets nobody in.
package auth
