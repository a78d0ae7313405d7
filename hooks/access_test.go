package hooks

import (
	"log/slog"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
)

// Users without passwords exist for certificate logins; the ACL only needs
// their names and roles.
const aclUsers = `users:
  - username: truck-1
    role: device
  - username: alice-phone
    role: device
    read_own_transitions: true
  - username: dash
    role: dashboard
  - username: ops
    role: admin
  - username: gw
    role: gateway
`

func accessHook(t *testing.T, users *auth.File) *Access {
	t.Helper()
	var tf []ingest.TelemetryFilter
	for _, f := range ingest.DefaultTelemetryFilters {
		x, err := ingest.ParseTelemetryFilter(f)
		if err != nil {
			t.Fatal(err)
		}
		tf = append(tf, x)
	}
	return NewAccess(users, tf, "geofence", "edgefence/late", "edgefence/rejected", slog.Default())
}

func client(name string) *mqtt.Client {
	cl := &mqtt.Client{}
	cl.Properties.Username = []byte(name)
	return cl
}

func TestACLMatrix(t *testing.T) {
	users, err := auth.Parse([]byte(aclUsers))
	if err != nil {
		t.Fatal(err)
	}
	h := accessHook(t, users)
	type op struct {
		topic string
		write bool
	}
	pub := func(s string) op { return op{s, true} }
	sub := func(s string) op { return op{s, false} }
	for _, tc := range []struct {
		user  string
		op    op
		allow bool
	}{
		{"truck-1", pub("devices/truck-1/telemetry"), true},
		{"truck-1", pub("devices/truck-2/telemetry"), false}, // another device's position
		{"truck-1", pub("geofence/depot/truck-1"), false},    // a forged transition
		{"truck-1", pub("edgefence/late/truck-1"), false},    // the server's side output
		{"truck-1", pub("$SYS/broker/uptime"), false},        // the broker's own topics
		{"truck-1", pub("owntracks/truck/1"), true},          // the OwnTracks form of its id
		{"truck-1", pub("chat/anything"), false},             // any other topic
		{"truck-1", sub("geofence/+/truck-1"), false},        // reads nothing unless allowed
		{"truck-1", sub("devices/+/telemetry"), false},       // other devices' telemetry
		{"alice-phone", pub("owntracks/alice/phone"), true},  // its OwnTracks topic
		{"alice-phone", sub("geofence/+/alice-phone"), true}, // its own transitions
		{"alice-phone", sub("geofence/depot/alice-phone"), true},
		{"alice-phone", sub("geofence/#"), false}, // everyone's transitions
		{"alice-phone", sub("geofence/+/+"), false},
		{"dash", sub("geofence/#"), true},
		{"dash", sub("$share/g/geofence/+/truck-1"), true},
		{"dash", sub("edgefence/late/#"), true},
		{"dash", sub("edgefence/rejected/truck-1"), true},
		{"dash", sub("devices/#"), false}, // raw telemetry
		{"dash", sub("#"), false},
		{"dash", pub("devices/dash/telemetry"), false}, // read-only
		{"ops", sub("#"), true},
		{"ops", pub("devices/truck-1/telemetry"), true},
		{"ops", pub("geofence/depot/truck-1"), false}, // not even an admin forges output
		{"ops", pub("$SYS/x"), false},
		{"gw", pub("devices/truck-1/telemetry"), true}, // any device's telemetry
		{"gw", pub("devices/anyone/telemetry"), true},
		{"gw", pub("owntracks/alice/phone"), true},
		{"gw", pub("devices//telemetry"), false},     // no device id
		{"gw", pub("geofence/depot/truck-1"), false}, // a forged transition
		{"gw", pub("edgefence/admin/fences"), false}, // anything else
		{"gw", pub("chat/anything"), false},
		{"gw", sub("devices/#"), false}, // reads nothing
		{"gw", sub("geofence/#"), false},
		{"stranger", pub("devices/stranger/telemetry"), false}, // not in the file
	} {
		if got := h.OnACLCheck(client(tc.user), tc.op.topic, tc.op.write); got != tc.allow {
			verb := "subscribe"
			if tc.op.write {
				verb = "publish"
			}
			t.Errorf("%s may %s %q = %v, want %v", tc.user, verb, tc.op.topic, got, tc.allow)
		}
	}
}

func TestAnonymousStillGuardsServerTopics(t *testing.T) {
	h := accessHook(t, nil)
	cl := client("")
	if !h.OnACLCheck(cl, "devices/x/telemetry", true) || !h.OnACLCheck(cl, "#", false) {
		t.Fatal("anonymous mode refused an ordinary publish or subscribe")
	}
	for _, topic := range []string{"geofence/a/b", "geofence", "edgefence/late/x", "edgefence/rejected", "$SYS/x"} {
		if h.OnACLCheck(cl, topic, true) {
			t.Errorf("anonymous client may publish on %q", topic)
		}
	}
}
