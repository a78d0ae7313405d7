package auth

import (
	"crypto/rand"
	"fmt"
	"strconv"

	"golang.org/x/crypto/bcrypt"
)

// bcryptCost is HashPassword's cost. Tests lower it: cost 12 under -race
// costs seconds a hash.
var bcryptCost = 12

const (
	bcryptLen      = 60 // "$2a$" + 2 cost digits + "$" + 22 salt + 31 hash characters
	bcryptMinCost  = bcrypt.MinCost
	bcryptMaxCost  = 14 // about a second a login on a small box: more is a typo or an attack
	bcryptMaxInput = 72 // bcrypt ignores what follows
	bcryptAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// bcryptHash is a $2a$, $2b$ or $2y$ hash; the three differ only in bugs of
// other implementations, not in what x/crypto computes.
type bcryptHash struct {
	raw  []byte
	cost int
}

func parseBcrypt(s string) (*bcryptHash, error) {
	if len(s) != bcryptLen {
		return nil, fmt.Errorf("%w: a bcrypt hash has %d characters, this one %d", ErrBadHash, bcryptLen, len(s))
	}
	if !isDigit(s[4]) || !isDigit(s[5]) || s[6] != '$' {
		return nil, fmt.Errorf("%w: bcrypt cost is not two digits", ErrBadHash)
	}
	cost := int(s[4]-'0')*10 + int(s[5]-'0')
	if cost < bcryptMinCost || cost > bcryptMaxCost {
		return nil, fmt.Errorf("%w: bcrypt cost %d out of range %d to %d", ErrBadHash, cost, bcryptMinCost, bcryptMaxCost)
	}
	for i := 7; i < len(s); i++ {
		if !isBcryptChar(s[i]) {
			return nil, fmt.Errorf("%w: bcrypt salt and hash contain a character outside bcrypt's base64 alphabet", ErrBadHash)
		}
	}
	if _, err := bcrypt.Cost([]byte(s)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHash, err)
	}
	return &bcryptHash{raw: []byte(s), cost: cost}, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isBcryptChar(c byte) bool {
	return c == '.' || c == '/' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || isDigit(c)
}

// verify refuses a password longer than bcrypt reads: bcrypt would accept
// it on its first 72 bytes, whatever follows.
func (h *bcryptHash) verify(password []byte) bool {
	if len(password) > bcryptMaxInput {
		return false
	}
	return bcrypt.CompareHashAndPassword(h.raw, password) == nil
}

func (h *bcryptHash) class() string { return "bcrypt/" + strconv.Itoa(h.cost) }

// dummy builds the hash from random characters rather than hashing a
// random password: the same work at verify, none at load.
func (h *bcryptHash) dummy() hash { return dummyBcrypt(h.cost) }

// memKiB is bcrypt's state, 4 KiB of S-boxes, whatever the cost.
func (h *bcryptHash) memKiB() uint32 { return 4 }

func dummyBcrypt(cost int) *bcryptHash {
	raw := fmt.Appendf(nil, "$2a$%02d$", cost)
	r := make([]byte, bcryptLen-len(raw))
	rand.Read(r) // never fails since Go 1.24
	for _, b := range r {
		raw = append(raw, bcryptAlphabet[b%64])
	}
	return &bcryptHash{raw: raw, cost: cost}
}

func hashBcrypt(password []byte, cost int) (string, error) {
	if len(password) > bcryptMaxInput {
		return "", ErrPasswordTooLong
	}
	h, err := bcrypt.GenerateFromPassword(password, cost)
	if err != nil {
		return "", fmt.Errorf("bcrypt: %w", err)
	}
	return string(h), nil
}
