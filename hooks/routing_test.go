package hooks

import (
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
)

// A granted subscription that may receive telemetry turns routing on at
// once; a refused one, or one that cannot, does not.
func TestRoutingFollowsGrantedSubscriptions(t *testing.T) {
	r := routing{filters: []string{"devices/+/telemetry"}}
	r.known.Store(true)
	r.subscribed(packets.Subscriptions{{Filter: "geofence/#"}}, []byte{0x01})
	if r.routed() {
		t.Fatal("routed after a geofence/# subscription")
	}
	r.subscribed(packets.Subscriptions{{Filter: "devices/#"}}, []byte{0x87})
	if r.routed() {
		t.Fatal("routed after a refused devices/# subscription")
	}
	r.subscribed(packets.Subscriptions{{Filter: "geofence/#"}, {Filter: "$share/g/devices/+/telemetry"}}, []byte{0x01, 0x01})
	if !r.routed() {
		t.Fatal("not routed after a granted shared telemetry subscription")
	}
}
