package auth

import "crypto/subtle"

// MaxArgon2Memory is the most memory, in KiB, one password verification
// may allocate: 64 MiB, the cost of RFC 9106's second recommended option
// and of `edgefence passwd` before issue 21. A users file with a costlier
// hash is refused at load (ErrHashTooCostly): a login, even a bogus one,
// makes the server allocate what the hash asks for.
const MaxArgon2Memory = 64 << 10

// verifyBudget is the memory, in KiB, that the verifications running at
// once may allocate together (see VerifySlots).
const verifyBudget = 8 << 10

// VerifySlots returns how many password verifications may run at once: at
// most procs (one a core: more only queue for the CPU), and no more than
// fit in an 8 MiB budget with the file's costliest hash, at least one. A
// bcrypt file gets procs; an Argon2id one at passwd's cost (7 MiB) one:
// on an idle edge box the hash would otherwise be most of the process's
// memory (docs/security.md).
func (f *File) VerifySlots(procs int) int {
	return max(1, min(procs, int(verifyBudget/max(1, f.VerifyMemory()))))
}

// VerifyMemory is the most memory, in KiB, one verification against the
// file may allocate.
func (f *File) VerifyMemory() uint32 {
	most := f.dummy.memKiB()
	for i := range f.users {
		if h := f.users[i].hash; h != nil {
			most = max(most, h.memKiB())
		}
	}
	return most
}

// Cached returns the user if password is the one last verified for
// username, without a slow hash; nil otherwise (the caller then runs
// Verify).
func (f *File) Cached(username string, password []byte) *User {
	i, ok := f.byName[username]
	if !ok || f.users[i].hash == nil {
		return nil
	}
	sum := f.digest(password)
	if c := f.cached[i].Load(); c != nil && subtle.ConstantTimeCompare(c[:], sum[:]) == 1 {
		return &f.users[i]
	}
	return nil
}

// Verify checks a username/password pair with exactly one slow hash,
// whatever the answer (an unknown or password-less user is verified
// against a dummy hash of the file's usual cost), and caches a success for
// Cached. It returns the user, or nil.
func (f *File) Verify(username string, password []byte) *User {
	i, ok := f.byName[username]
	if !ok || f.users[i].hash == nil {
		f.dummy.verify(password) // the answer is no either way; only the time matters
		return nil
	}
	u := &f.users[i]
	if !u.hash.verify(password) {
		return nil
	}
	sum := f.digest(password)
	f.cached[i].Store(&sum)
	return u
}
