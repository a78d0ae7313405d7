package auth

import (
	"fmt"
	"strings"
)

// hash is a parsed password hash.
type hash interface {
	// verify reports whether password matches. It costs what the hash's
	// parameters say, whatever the answer.
	verify(password []byte) bool
	// class names the scheme and parameters: hashes of one class cost the
	// same to verify.
	class() string
	// dummy returns a hash of the same class that no password matches,
	// against which a login for an unknown user is verified so that it
	// takes as long as a wrong password would.
	dummy() hash
	// memKiB is what one verification allocates, in KiB.
	memKiB() uint32
}

// parseHash parses a password field. Anything that is not a recognised
// scheme is refused as plaintext: an operator who pastes a password there
// must learn at load, not at the first failed login. Errors never repeat
// the field, which may be a real password.
func parseHash(s string) (hash, error) {
	switch {
	case s == "":
		return nil, fmt.Errorf("%w (the password is empty: leave the key out for a certificate-only user)", ErrNotHash)
	case strings.HasPrefix(s, "$argon2id$"):
		return parseArgon2id(s)
	case strings.HasPrefix(s, "$2a$"), strings.HasPrefix(s, "$2b$"), strings.HasPrefix(s, "$2y$"):
		return parseBcrypt(s)
	case s[0] == '$':
		scheme, _, _ := strings.Cut(s[1:], "$")
		if len(scheme) <= 12 && isPrintable(scheme) {
			return nil, fmt.Errorf("%w (scheme $%s$ is not supported)", ErrNotHash, scheme)
		}
	}
	return nil, ErrNotHash
}

// isPrintable reports whether s is short ASCII worth quoting in an error.
func isPrintable(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// HashPassword returns a hash for the user file: algorithm "bcrypt" (cost
// 12) or "argon2id" (PHC string format
// $argon2id$v=19$m=7168,t=5,p=1$<salt>$<key>, unpadded standard base64,
// 16-byte salt, 32-byte key). An empty password is refused (ErrEmptyPassword),
// as is one longer than bcrypt reads (ErrPasswordTooLong), which argon2id
// takes.
func HashPassword(password []byte, algorithm string) (string, error) {
	if len(password) == 0 {
		return "", ErrEmptyPassword
	}
	switch algorithm {
	case "bcrypt":
		return hashBcrypt(password, bcryptCost)
	case "argon2id":
		return argon2Default.hash(password), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownAlgorithm, algorithm)
}
