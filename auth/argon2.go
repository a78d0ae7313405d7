package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2Params are argon2id's cost parameters and output sizes.
type argon2Params struct {
	memory  uint32 // KiB
	time    uint32 // passes
	threads uint8  // lanes
	saltLen int
	keyLen  int
}

// argon2Default is HashPassword's choice: OWASP's Argon2id configuration
// of least memory (7 MiB, 5 passes, 1 lane; as costly to guess as their
// 19 MiB, 2 passes), since every login, bogus ones too, allocates it on
// an edge box (see VerifySlots). Tests lower it.
var argon2Default = argon2Params{memory: 7 << 10, time: 5, threads: 1, saltLen: 16, keyLen: 32}

// Bounds on the parameters a file may give, so that a hostile or mistyped
// hash cannot make one login take minutes or exhaust memory.
const (
	argon2MaxMemory  = 1 << 20 // KiB: 1 GiB
	argon2MaxTime    = 10
	argon2MaxThreads = 16
	argon2MinSalt    = 8
	argon2MaxSalt    = 64
	argon2MinKey     = 16
	argon2MaxKey     = 64
)

// b64 is the PHC string format's base64: standard alphabet, no padding,
// and no stray bits, so that one hash has one spelling.
var b64 = base64.RawStdEncoding.Strict()

// argon2Hash is a parsed $argon2id$ hash.
type argon2Hash struct {
	argon2Params
	salt, key []byte
}

// parseArgon2id parses $argon2id$v=19$m=M,t=T,p=P$salt$key, the form every
// argon2 library writes; the optional PHC keyid and data parameters are
// refused, since nothing here would use them.
func parseArgon2id(s string) (*argon2Hash, error) {
	f := strings.Split(s, "$")
	if len(f) != 6 || f[0] != "" || f[1] != "argon2id" {
		return nil, fmt.Errorf("%w: want $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>", ErrBadHash)
	}
	if f[2] != "v="+strconv.Itoa(argon2.Version) {
		return nil, fmt.Errorf("%w: argon2id version must be v=%d", ErrBadHash, argon2.Version)
	}
	var p [3]uint64
	params := strings.Split(f[3], ",")
	if len(params) != len(p) {
		return nil, fmt.Errorf("%w: argon2id parameters must be m=<KiB>,t=<passes>,p=<lanes>", ErrBadHash)
	}
	for i, name := range []string{"m=", "t=", "p="} {
		v, ok := strings.CutPrefix(params[i], name)
		n, err := strconv.ParseUint(v, 10, 32)
		if !ok || err != nil {
			return nil, fmt.Errorf("%w: argon2id parameters must be m=<KiB>,t=<passes>,p=<lanes>", ErrBadHash)
		}
		p[i] = n
	}
	h := &argon2Hash{argon2Params: argon2Params{memory: uint32(p[0]), time: uint32(p[1])}}
	switch {
	case p[2] < 1 || p[2] > argon2MaxThreads:
		return nil, fmt.Errorf("%w: argon2id p=%d out of range 1 to %d", ErrBadHash, p[2], argon2MaxThreads)
	case p[1] < 1 || p[1] > argon2MaxTime:
		return nil, fmt.Errorf("%w: argon2id t=%d out of range 1 to %d", ErrBadHash, p[1], argon2MaxTime)
	case p[0] < 8*p[2] || p[0] > argon2MaxMemory:
		return nil, fmt.Errorf("%w: argon2id m=%d KiB out of range 8 per lane to %d", ErrBadHash, p[0], argon2MaxMemory)
	}
	h.threads = uint8(p[2])
	var err error
	if h.salt, err = b64.DecodeString(f[4]); err != nil || len(h.salt) < argon2MinSalt || len(h.salt) > argon2MaxSalt {
		return nil, fmt.Errorf("%w: argon2id salt must be %d to %d bytes of unpadded base64", ErrBadHash, argon2MinSalt, argon2MaxSalt)
	}
	if h.key, err = b64.DecodeString(f[5]); err != nil || len(h.key) < argon2MinKey || len(h.key) > argon2MaxKey {
		return nil, fmt.Errorf("%w: argon2id key must be %d to %d bytes of unpadded base64", ErrBadHash, argon2MinKey, argon2MaxKey)
	}
	h.saltLen, h.keyLen = len(h.salt), len(h.key)
	return h, nil
}

func (h *argon2Hash) verify(password []byte) bool {
	k := argon2.IDKey(password, h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(k, h.key) == 1
}

func (h *argon2Hash) memKiB() uint32 { return h.memory }

func (h *argon2Hash) class() string {
	return fmt.Sprintf("argon2id/m=%d,t=%d,p=%d/%d", h.memory, h.time, h.threads, h.keyLen)
}

// dummy draws a random salt and key: the same work at verify, none at load.
func (h *argon2Hash) dummy() hash {
	d := &argon2Hash{argon2Params: h.argon2Params, salt: make([]byte, h.saltLen), key: make([]byte, h.keyLen)}
	rand.Read(d.salt) // never fails since Go 1.24
	rand.Read(d.key)
	return d
}

// hash returns a new hash of password in the PHC string format.
func (p argon2Params) hash(password []byte) string {
	salt := make([]byte, p.saltLen)
	rand.Read(salt) // never fails since Go 1.24
	key := argon2.IDKey(password, salt, p.time, p.memory, p.threads, uint32(p.keyLen))
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.memory, p.time, p.threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}
