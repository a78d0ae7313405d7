package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A LoRaWAN filter's field mapping is set as the flag's value, in the
// config file (one "flag value" line) or in an environment variable,
// whose comma-separated list splits the mapping off its filter.
func TestLoRaWANFieldMappingFromConfigFileAndEnv(t *testing.T) {
	const filter = "application/+/device/+/event/up=chirpstack,lat=gps.lat,lon=gps.lng,id=deviceName"
	conf := filepath.Join(t.TempDir(), "edgefence.conf")
	if err := os.WriteFile(conf, []byte("telemetry-topic "+filter+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"config file", nil, []string{"--config", conf}},
		{"environment", []string{"EDGEFENCE_TELEMETRY_TOPIC=" + filter}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, t.TempDir(), tc.env, tc.args...)
			dash := connect(t, p.mqtt, "dashboard")
			dash.Subscribe("geofence/#")
			ns := connect(t, p.mqtt, "chirpstack")
			at := time.Now().Add(-5 * time.Second).UTC()
			ns.publish("application/app/device/0101010101010101/event/up", fmt.Appendf(nil,
				`{"time":%q,"deviceInfo":{"devEui":"0101010101010101","deviceName":"truck-9"},"devAddr":"00189440","fCnt":3,`+
					`"object":{"gps":{"lat":%v,"lng":%v}},"rxInfo":[{"gatewayId":"0016c001f153a14c","nsTime":%q}]}`,
				at.Format(time.RFC3339Nano), museumLat, museumLon, at.Format(time.RFC3339Nano)))
			m := dash.Next("the ENTER of the mapped uplink")
			if tr := decode(t, "geofence", m); tr.Type != "ENTER" || tr.Device != "truck-9" || tr.Ts != at.UnixMilli() {
				t.Fatalf("got %s: %s", tr, m.Payload)
			}
		})
	}
}
