package broker_test

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// A publisher's MQTT 5 User Properties are not echoed in its PUBACK. mochi
// copies them into the acknowledgement unless told not to, and then also
// writes its reason code 0x01 (granted QoS 1, a SUBACK code) which it
// leaves out of a PUBACK with no properties: Paho's MQTT 5 clients refuse
// such an acknowledgement, and paho.golang reports reason 0x01 with the
// properties. Checked for a ping and for any other topic.
func TestPubackDoesNotEchoUserProperties(t *testing.T) {
	srv := start(t, testConfig(t))
	cl := connect5(t, srv.MQTTAddr(), "props")
	for _, c := range []struct{ what, topic string }{
		{"a ping", "devices/props/telemetry"},
		{"a status", "devices/props/status"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		pr, err := cl.Paho.Publish(ctx, &paho.Publish{
			Topic:   c.topic,
			QoS:     1,
			Payload: canonical(museumLat, museumLon, nowMs()),
			Properties: &paho.PublishProperties{
				User: paho.UserProperties{{Key: "fleet", Value: "north"}, {Key: "fw", Value: "1.2"}},
			},
		})
		cancel()
		if err != nil {
			t.Fatalf("%s with user properties: %v (the client refused the PUBACK?)", c.what, err)
		}
		if pr.ReasonCode != 0 {
			t.Errorf("%s: PUBACK %#x, want 0", c.what, pr.ReasonCode)
		}
		if pr.Properties != nil && len(pr.Properties.User) > 0 {
			t.Errorf("%s: PUBACK carries user properties %v", c.what, pr.Properties.User)
		}
	}
	// The connection survived both acknowledgements.
	cl.ping("props", museumLat, museumLon, nowMs())
}
