// Package lorawantest builds what the end-to-end tests of LoRaWAN
// telemetry publish: ChirpStack v4 uplinks of a fleet of trackers
// crossing a fence, as a network server's MQTT integration sends them
// (the shape of evaluator/payload/lorawan/testdata/chirpstack-v4-up.json),
// with the transitions that truly happened.
package lorawantest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Filter is ChirpStack v4's uplink topic filter, for --telemetry-topic.
const Filter = "application/+/device/+/event/up"

// Positions, checked against the bundled fences.geojson.
const (
	InLat, InLon   = 52.52, 13.40 // inside only zone-museumsinsel
	OutLat, OutLon = 52.50, 13.30 // inside no fence
	Fence          = "zone-museumsinsel"
)

// Publish is one message of the network server.
type Publish struct {
	Topic   string
	Payload []byte
}

// Fleet is the scenario: the publishes in order, the transitions that
// truly happened ("device fence TYPE ts time_source"), and what the
// network server sent that makes no ping.
type Fleet struct {
	Publishes  []Publish
	Want       []string
	Duplicates int // copies of frames already sent (second gateway, replay)
	NoPosition int // heartbeats
}

// Frames each device sends: out, out, in, in, out, out — one ENTER, one EXIT.
var legs = []bool{false, false, true, true, false, false}

// ChirpStackFleet returns the uplinks of n devices, each walking into the
// fence and out again one frame a second from base (so its stamps lie in
// the past, as a backlog's do), with a mix of clocks and deliveries:
//   - device d%3 == 0: both gateways have GPS (the earliest gwTime counts);
//     d%3 == 1: neither, the network server's time counts; d%3 == 2: only
//     the second has GPS;
//   - d%4 == 0: every frame arrives twice, one event per gateway (the
//     server did not deduplicate them); otherwise one event lists both;
//   - d%10 == 5: a heartbeat without a position after its frames;
//   - device 7's first inside frame is sent again at the very end with the
//     gateways' times of then: a retransmission of an fCnt already taken,
//     which would otherwise put the device back inside the fence.
func ChirpStackFleet(n int, base time.Time) Fleet {
	var f Fleet
	type frame struct {
		dev  int
		fcnt uint32
		at   time.Time
		in   bool
	}
	var replay Publish
	seq := 0
	up := func(d int, fcnt uint32, in bool, at time.Time, rx ...map[string]any) Publish {
		seq++
		return uplink(seq, d, fcnt, in, at, rx...)
	}
	base = base.Truncate(time.Millisecond)
	for k := range legs {
		for d := range n {
			fr := frame{dev: d, fcnt: uint32(1000*d + k), at: base.Add(time.Duration(k)*time.Second + time.Duration(d)*10*time.Millisecond), in: legs[k]}
			gw1 := fr.at.Add(300 * time.Microsecond)
			gw2 := fr.at.Add(200 * time.Microsecond)
			var gps [2]time.Time
			switch d % 3 {
			case 0:
				gps = [2]time.Time{gw1, gw2}
			case 2:
				gps[1] = gw2
			}
			nsTime := fr.at.Add(400 * time.Millisecond)
			if d%4 == 0 {
				f.Publishes = append(f.Publishes, up(d, fr.fcnt, fr.in, nsTime, rxInfo(0, gps[0], nsTime)), up(d, fr.fcnt, fr.in, nsTime.Add(50*time.Millisecond), rxInfo(1, gps[1], nsTime)))
				f.Duplicates++
			} else {
				f.Publishes = append(f.Publishes, up(d, fr.fcnt, fr.in, nsTime, rxInfo(0, gps[0], nsTime), rxInfo(1, gps[1], nsTime)))
			}
			if d == 7 && k == 2 {
				later := base.Add(time.Duration(len(legs)+2) * time.Second)
				replay = up(d, fr.fcnt, fr.in, later, rxInfo(0, later, later))
			}
			if k > 0 && legs[k] != legs[k-1] {
				typ := "ENTER"
				if !legs[k] {
					typ = "EXIT"
				}
				// The first delivery is the ping: its earliest GPS time,
				// else the network server's.
				stamp, src := nsTime, "network_server"
				first := gps[:]
				if d%4 == 0 {
					first = gps[:1]
				}
				for _, g := range first {
					if !g.IsZero() && (src != "gateway_gps" || g.Before(stamp)) {
						stamp, src = g, "gateway_gps"
					}
				}
				f.Want = append(f.Want, fmt.Sprintf("%s %s %s %d %s", eui(d), Fence, typ, stamp.UnixMilli(), src))
			}
		}
	}
	for d := 5; d < n; d += 10 {
		hb, _ := json.Marshal(map[string]any{
			"deduplicationId": fmt.Sprintf("hb-%d", d), "time": base.Add(7 * time.Second).Format(time.RFC3339Nano),
			"deviceInfo": map[string]any{"devEui": eui(d), "deviceName": fmt.Sprintf("tracker-%d", d)},
			"devAddr":    "00189440", "fCnt": 1000*d + len(legs), "fPort": 3,
			"object": map[string]any{"batteryVoltage": 3.61},
			"rxInfo": []any{rxInfo(0, time.Time{}, base.Add(7*time.Second))},
		})
		f.Publishes = append(f.Publishes, Publish{Topic: topic(d), Payload: hb})
		f.NoPosition++
	}
	if n > 7 {
		f.Publishes = append(f.Publishes, replay)
		f.Duplicates++
	}
	slices.Sort(f.Want)
	return f
}

func eui(d int) string   { return fmt.Sprintf("70b3d57ed00%05x", d) }
func topic(d int) string { return "application/2f1c8b0e-trackers/device/" + eui(d) + "/event/up" }

func rxInfo(g int, gps, ns time.Time) map[string]any {
	rx := map[string]any{
		"gatewayId": fmt.Sprintf("0016c001f153a1%02x", g), "uplinkId": 1000 + g,
		"nsTime": ns.Format(time.RFC3339Nano), "rssi": -60 - 5*g, "snr": 7.5, "channel": 2,
		"context": "EFwMtA==", "crcStatus": "CRC_OK",
	}
	if !gps.IsZero() {
		rx["gwTime"] = gps.Format(time.RFC3339Nano)
	}
	return rx
}

// uplink is ChirpStack's event/up number seq of device d.
func uplink(seq, d int, fcnt uint32, in bool, at time.Time, rx ...map[string]any) Publish {
	lat, lon := OutLat, OutLon
	if in {
		lat, lon = InLat, InLon
	}
	b, _ := json.Marshal(map[string]any{
		"deduplicationId": fmt.Sprintf("5ad0e1f2-0000-4000-8000-%012d", seq),
		"time":            at.Format(time.RFC3339Nano),
		"deviceInfo": map[string]any{
			"tenantName": "ChirpStack", "applicationId": "2f1c8b0e", "applicationName": "trackers",
			"deviceProfileName": "GPS tracker", "deviceName": fmt.Sprintf("tracker-%d", d), "devEui": eui(d),
		},
		"devAddr": "00189440", "adr": true, "dr": 5, "fCnt": fcnt, "fPort": 2, "data": "AQID",
		// No accuracy: the fleet's frames come a second apart, and a fix
		// with one would need a second that agrees (docs/fences.md).
		"object": map[string]any{"latitude": lat, "longitude": lon},
		"rxInfo": rx,
		"txInfo": map[string]any{"frequency": 868100000, "modulation": map[string]any{"lora": map[string]any{"bandwidth": 125000, "spreadingFactor": 7}}},
	})
	return Publish{Topic: topic(d), Payload: b}
}
