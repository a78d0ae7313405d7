package broker_test

// Protocol edges that Mosquitto gets right (issue 31, finding 4), over
// loopback TCP with the raw client of rawclient_test.go.

import (
	"fmt"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// A PUBLISH by a Topic Alias this connection never set names no topic: the
// server must answer DISCONNECT 0x82, Protocol Error, and close (MQTT 5
// §3.3.2.3.4, §3.3.4; Mosquitto does, Paho's client_topic_alias test
// expects it). Before, it was acknowledged with 0x00 and dropped. An
// alias of 0 is 0x94, Topic Alias invalid. With logins on, the access
// hook resolves aliases for the ACL first, and must not hide the error.
func TestUnknownTopicAliasIsAProtocolError(t *testing.T) {
	alias := func(a uint16) func(*packets.Packet) {
		return func(pk *packets.Packet) { pk.Properties.TopicAlias, pk.Properties.TopicAliasFlag = a, true }
	}
	t0 := nowMs() - 30_000
	for _, auth := range []bool{false, true} {
		cfg := testConfig(t)
		cr := anonymous
		if auth {
			cfg.Auth = writeUsers(t, aclUsers...)
			cr = login("truck-1")
		}
		srv := start(t, cfg)
		for _, c := range []struct {
			what  string
			qos   byte
			setBy bool // another connection set the alias first
			alias uint16
			want  byte
		}{
			{"QoS 1 by alias 7, never set", 1, false, 7, 0x82},
			{"QoS 0 by alias 7, never set", 0, false, 7, 0x82},
			{"QoS 1 by alias 7, set on another connection", 1, true, 7, 0x82},
			{"QoS 1 by alias 0", 1, false, 0, 0x94},
		} {
			what := fmt.Sprintf("auth %v: %s", auth, c.what)
			if c.setBy {
				other := dialRaw(t, srv.MQTTAddr(), 5)
				other.mustConnect(mqtttest.ID("alias-setter"), cr)
				if rc := other.pub1("devices/truck-1/telemetry", 1, canonical(outLat, outLon, t0), alias(c.alias)); rc != 0 {
					t.Fatalf("%s: setting the alias on another connection: PUBACK %#x", what, rc)
				}
			}
			tk := dialRaw(t, srv.MQTTAddr(), 5)
			tk.mustConnect(mqtttest.ID("alias-user"), cr)
			var id uint16
			if c.qos > 0 {
				id = 1
			}
			var err error
			if c.alias == 0 {
				// mochi's encoder leaves out an alias of 0: by hand, a QoS 1
				// PUBLISH with no topic, packet id 1, Topic Alias (0x23) 0.
				err = tk.write([]byte{0x32, 9, 0, 0, 0, 1, 3, 0x23, 0, 0, 'x'})
			} else {
				err = tk.publish(c.qos, id, "", canonical(outLat, outLon, t0), alias(c.alias))
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			tk.closedWith(what, c.want)
		}
		// The server still serves: a connection setting its own alias and
		// then using it is answered 0x00.
		tk := dialRaw(t, srv.MQTTAddr(), 5)
		tk.mustConnect(mqtttest.ID("alias-ok"), cr)
		if rc := tk.pub1("devices/truck-1/telemetry", 1, canonical(outLat, outLon, t0), alias(7)); rc != 0 {
			t.Errorf("auth %v: setting alias 7: PUBACK %#x, want 0", auth, rc)
		}
		if rc := tk.pub1("", 2, canonical(outLat, outLon, t0+1000), alias(7)); rc != 0 {
			t.Errorf("auth %v: publishing by alias 7 after setting it: PUBACK %#x, want 0", auth, rc)
		}
	}
}
