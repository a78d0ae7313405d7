package auth

import (
	"crypto/sha256"
)

// Authenticate checks a username/password pair: Cached, else Verify. It
// returns the user, or nil for an unknown user, a user without a password
// or a wrong password, taking about the same time either way (an unknown
// name is verified against a dummy hash) so usernames cannot be probed by
// timing.
//
// A successful verification is cached, as a keyed SHA-256 of the password
// compared in constant time, so that a fleet reconnecting at once costs
// one slow hash per device rather than per connection. A wrong password
// for a cached user takes the slow path and leaves the cache alone: were
// it cleared, anyone could make every device pay the slow hash again.
func (f *File) Authenticate(username string, password []byte) *User {
	if u := f.Cached(username, password); u != nil {
		return u
	}
	return f.Verify(username, password)
}

// digest is the cache's keyed hash of a password.
func (f *File) digest(password []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write(f.cacheKey[:])
	h.Write(password)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
