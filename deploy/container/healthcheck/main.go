// Command healthcheck is the container image's HEALTHCHECK. The runtime
// image (distroless static) has no shell, curl or wget, so this small
// static binary does the one thing a probe needs: GET a URL (default
// http://127.0.0.1:9090/readyz, edgefence's readiness endpoint) and exit 0
// on 200 OK, 1 on anything else or no answer within 3 seconds.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultURL is edgefence's readiness endpoint at the image's --http-addr.
const DefaultURL = "http://127.0.0.1:9090/readyz"

func main() {
	url := DefaultURL
	if len(os.Args) > 1 {
		url = os.Args[1]
	}
	if err := check(url, 3*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		os.Exit(1)
	}
}

// check returns nil when url answers 200 OK within timeout.
func check(url string, timeout time.Duration) error {
	c := http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return nil
}
