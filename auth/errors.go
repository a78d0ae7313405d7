package auth

import (
	"errors"
	"fmt"
)

// Sentinel errors of the user file, wrapped in a *UserError that names the
// user; test with errors.Is.
var (
	ErrUnknownRole      = errors.New("unknown role")
	ErrMissingRole      = errors.New("role is required (device, gateway, dashboard or admin)")
	ErrUnknownKey       = errors.New("unknown key")
	ErrDuplicateUser    = errors.New("duplicate username")
	ErrInvalidUsername  = errors.New("invalid username")
	ErrReadOwnNotDevice = errors.New("read_own_transitions is only for role device")
	// ErrNotHash is a password that is plaintext or in a scheme the broker
	// does not know. The message never repeats the password.
	ErrNotHash = errors.New("password must be a bcrypt or argon2id hash, not plaintext: make one with `edgefence passwd`")
	// ErrBadHash is a recognised hash that is malformed or whose cost is
	// outside the accepted bounds.
	ErrBadHash = errors.New("bad password hash")
	// ErrHashTooCostly is a valid hash whose verification would allocate
	// more than MaxArgon2Memory.
	ErrHashTooCostly = errors.New("password hash too costly for this server")
)

// Errors of HashPassword.
var (
	ErrEmptyPassword    = errors.New("empty password")
	ErrUnknownAlgorithm = errors.New("unknown hash algorithm (want bcrypt or argon2id)")
	ErrPasswordTooLong  = errors.New("password longer than 72 bytes: bcrypt would ignore the rest; use argon2id")
)

// UserError is a problem with one entry of the users list.
type UserError struct {
	Index int    // position in the users list, from 1
	Line  int    // line of the entry in the file
	Name  string // the entry's username, "" if it has none
	Err   error
}

// Error names the entry by position, username and line, so the operator
// finds it in a long file.
func (e *UserError) Error() string {
	return fmt.Sprintf("user %d (%q, line %d): %v", e.Index, e.Name, e.Line, e.Err)
}

// Unwrap returns the underlying problem, for errors.Is.
func (e *UserError) Unwrap() error { return e.Err }
