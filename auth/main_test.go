package auth

import (
	"os"
	"testing"
)

// The production costs, read before TestMain lowers them.
var (
	prodBcryptCost = bcryptCost
	prodArgon2     = argon2Default
)

// Hashes of "secret" (and one of "dashpass") at test costs, made once.
var (
	bcryptSecret string
	argonSecret  string
	argonDash    string
)

func TestMain(m *testing.M) {
	// Production costs take seconds a hash under -race; the code paths are
	// the same at the lowest costs.
	bcryptCost = bcryptMinCost
	argon2Default = argon2Params{memory: 64, time: 1, threads: 1, saltLen: 16, keyLen: 32}
	var err error
	if bcryptSecret, err = HashPassword([]byte("secret"), "bcrypt"); err != nil {
		panic(err)
	}
	if argonSecret, err = HashPassword([]byte("secret"), "argon2id"); err != nil {
		panic(err)
	}
	if argonDash, err = HashPassword([]byte("dashpass"), "argon2id"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// mustParse parses a file the test expects to be valid.
func mustParse(t testing.TB, yaml string) *File {
	t.Helper()
	f, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	return f
}
