package clienttls_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/clienttls"
)

// Each bad file is named in the error; no files means the system's roots
// and no client certificate.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := clienttls.Config("", "", "")
	if err != nil || c.RootCAs != nil || len(c.Certificates) != 0 {
		t.Fatalf("no files: %+v, %v", c, err)
	}
	for _, tc := range []struct{ ca, cert, key, want string }{
		{ca: junk, want: "CA file " + junk + ": no PEM certificates"},
		{ca: filepath.Join(dir, "missing.pem"), want: "missing.pem"},
		{cert: junk, key: junk, want: "certificate " + junk},
	} {
		if _, err := clienttls.Config(tc.ca, tc.cert, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Config(%q, %q, %q) = %v, want an error containing %q", tc.ca, tc.cert, tc.key, err, tc.want)
		}
	}
}
