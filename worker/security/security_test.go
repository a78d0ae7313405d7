package security

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestExplainMQTTClose: NATS's MQTT side answers a refused login by
// closing the connection (seen with an mqtt-block authorization and with
// a creds user that is no bearer token: paho reports EOF after 30 s of
// retries); the error says what that usually means.
func TestExplainMQTTClose(t *testing.T) {
	var s Settings
	err := s.Explain(fmt.Errorf("network Error : %w", io.EOF))
	if !strings.Contains(err.Error(), "a login it refuses") || !strings.Contains(err.Error(), "bearer token") {
		t.Errorf("%v", err)
	}
}

func TestRedactURLs(t *testing.T) {
	got := RedactURLs("nats://edge:s3cret@n1:4222,nats://n2:4222")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "nats://edge:xxxxx@n1:4222") || !strings.HasSuffix(got, ",nats://n2:4222") {
		t.Errorf("redacted to %q", got)
	}
}
