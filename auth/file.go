package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"sync/atomic"
)

// User is one entry of the file. The *User a File hands out is shared and
// must not be modified.
type User struct {
	Name    string // the MQTT username; for a device, its device id (a valid single MQTT topic level, ≤ 128 bytes)
	Role    Role
	ReadOwn bool // device only: may subscribe to its own transitions

	hash hash // nil: certificate authentication only
}

// HasPassword reports whether the user may log in with a password; one
// without may only log in with a client certificate.
func (u *User) HasPassword() bool { return u.hash != nil }

// File is a parsed, immutable user file; safe for concurrent use. A reload
// parses a new File, which also starts a new login cache, so a changed or
// removed password takes effect at once.
type File struct {
	users  []User
	byName map[string]int // index into users and cached

	// cached[i] is the digest of users[i]'s last verified password: one
	// slot a user bounds the cache by the file, whoever knocks.
	cached []atomic.Pointer[[sha256.Size]byte]
	// cacheKey keys the digests, so that memory read by an attacker does
	// not hold fast, unsalted hashes of passwords to brute-force.
	cacheKey [32]byte
	// dummy is verified for logins by unknown or password-less users.
	dummy hash
	// limits are the publish rate limits the file sets, by role.
	limits map[Role]Limit
}

// Load reads and parses the user file at path. Errors name the path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	return f, nil
}

// newFile indexes users, which have been validated and have distinct names.
func newFile(users []User) *File {
	f := &File{
		users:  users,
		byName: make(map[string]int, len(users)),
		cached: make([]atomic.Pointer[[sha256.Size]byte], len(users)),
		dummy:  dummyFor(users),
	}
	for i := range users {
		f.byName[users[i].Name] = i
	}
	rand.Read(f.cacheKey[:]) // never fails since Go 1.24
	return f
}

// dummyFor picks the hash class most users have, so that a login for an
// unknown name costs what one for most real names does. (Names of a rarer
// class stay distinguishable by timing; a file of one class, the usual
// case, leaks nothing.)
func dummyFor(users []User) hash {
	var best hash
	count := map[string]int{}
	for i := range users {
		h := users[i].hash
		if h == nil {
			continue
		}
		c := h.class()
		count[c]++
		if best == nil || count[c] > count[best.class()] {
			best = h
		}
	}
	if best == nil {
		return dummyBcrypt(bcryptCost) // nobody logs in by password: cost like a default hash
	}
	return best.dummy()
}

// User returns the user named name, or nil if there is none. It is what
// client-certificate authentication uses: the certificate's CN is the
// username.
func (f *File) User(name string) *User {
	i, ok := f.byName[name]
	if !ok {
		return nil
	}
	return &f.users[i]
}

// Len returns the number of users.
func (f *File) Len() int { return len(f.users) }
