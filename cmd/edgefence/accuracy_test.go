package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Over real MQTT, with the adaptive hold: a fix whose accuracy circle
// straddles customer-alex's edge (a 150 m circle) does not ENTER it, nor
// does the fix clear inside after it (the fix before it is within the
// margin), the second clear one does; an OwnTracks fix's acc counts the
// same; the device's hold shows in /metrics.
func TestAdaptiveHoldAndAccuracyEdgesEndToEnd(t *testing.T) {
	p := startServe(t, t.TempDir(), nil, "--hold", "adaptive", "--hold-max", "300ms")
	dash := connect(t, p.mqtt, "dashboard")
	dash.Subscribe("geofence/customer-alex/#")
	tracker := connect(t, p.mqtt, "tracker")
	const alexLat, alexLon, mPerDegLat = 52.5219, 13.4132, 111195.0
	now := time.Now().UnixMilli()
	north := func(m float64) float64 { return alexLat + m/mPerDegLat }
	send := func(device string, m, acc float64, ts int64) {
		tracker.publish("devices/"+device+"/telemetry", fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d,"acc":%v}`, north(m), alexLon, ts, acc))
	}
	send("acc-1", 140, 30, now-3000) // inside by 10 m, ±30 m: straddles
	send("acc-1", 50, 30, now-2000)  // inside by 100 m, after one that straddles: not yet
	send("acc-1", 45, 30, now-1000)  // and again: ENTER
	for i, m := range []float64{140, 50, 45} {
		tracker.publish("owntracks/acc/phone", fmt.Appendf(nil, `{"_type":"location","lat":%v,"lon":%v,"tst":%d,"acc":30}`, north(m), alexLon, now/1000-3+int64(i)))
	}

	got := map[string]transition{}
	for range 2 {
		tr := decode(t, "geofence", dash.Next("ENTER customer-alex"))
		got[tr.Device] = tr
	}
	if tr := got["acc-1"]; tr.Type != "ENTER" || tr.Ts != now-1000 {
		t.Errorf("acc-1: %s, want the ENTER of the second ping clear inside (@%d)", tr, now-1000)
	}
	if tr := got["acc-phone"]; tr.Type != "ENTER" || tr.Ts != (now/1000-1)*1000 {
		t.Errorf("acc-phone: %s, want the ENTER of the second OwnTracks fix clear inside (@%d)", tr, (now/1000-1)*1000)
	}

	// Two new devices, each at --hold-max until it settles: a sweep round
	// samples both in the 0.3 s bucket, none below.
	c := &http.Client{Timeout: time.Second}
	re := regexp.MustCompile(`edgefence_device_hold_seconds_bucket\{le="0.3"\} (\d+)\n`)
	below := `edgefence_device_hold_seconds_bucket{le="0.25"} 0` + "\n"
	deadline := time.Now().Add(2 * wait)
	for {
		var body []byte
		if resp, err := c.Get("http://" + p.http + "/metrics"); err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if m := re.FindSubmatch(body); m != nil && regexp.MustCompile(regexp.QuoteMeta(below)).Match(body) {
			if n, _ := strconv.Atoi(string(m[1])); n >= 2 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("edgefence_device_hold_seconds has no two devices at 300 ms:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
