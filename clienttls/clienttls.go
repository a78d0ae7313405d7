// Package clienttls builds the TLS settings of edgefence's outgoing
// connections (the bridge's to its upstream broker, a worker's to NATS)
// from the files an operator names.
package clienttls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Config returns a client configuration that verifies servers against
// the CAs in caFile (the system's roots when empty) and presents the
// certificate in certFile and keyFile when certFile is given. Errors
// name the file at fault.
func Config(caFile, certFile, keyFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificates in it", caFile)
		}
	}
	if certFile != "" {
		kp, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("certificate %s, key %s: %w", certFile, keyFile, err)
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}
