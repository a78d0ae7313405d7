package lorawan_test

import (
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
)

// A frame heard by several gateways arrives as one uplink listing them
// all, in any order, some with GPS time and some without: it decodes to
// one position stamped with the earliest GPS time, or the network
// server's time when no gateway has GPS.
func TestPropertyMultiGatewayEarliestGPS(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "gateways")
		var rx []map[string]any
		var want int64
		hasGPS := false
		for i := range n {
			g := map[string]any{"gatewayId": "gw" + string(rune('a'+i)), "rssi": -40 - i,
				"nsTime": base.Add(time.Second + time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano)}
			if rapid.Bool().Draw(t, "gps") {
				// The same transmission: GPS times differ by propagation
				// and gateway jitter, microseconds to a few ms.
				at := base.Add(time.Duration(rapid.Int64Range(0, 5e6).Draw(t, "gps_ns")))
				g["gwTime"] = at.Format(time.RFC3339Nano)
				if !hasGPS || at.UnixNano() < want {
					want, hasGPS = at.UnixNano(), true
				}
			}
			rx = append(rx, g)
		}
		up := map[string]any{
			"time":       base.Add(2 * time.Second).Format(time.RFC3339Nano),
			"deviceInfo": map[string]any{"devEui": "0101010101010101"},
			"fCnt":       rapid.Uint32().Draw(t, "fcnt"),
			"object":     map[string]any{"lat": 52.5, "lon": 13.4},
			"rxInfo":     rx,
		}
		data, _ := json.Marshal(up)
		var d lorawan.Decoder
		u, err := d.Decode(data, payload.Auto, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := u.Position
		if !hasGPS {
			want = base.Add(2 * time.Second).UnixNano()
		}
		source := map[bool]payload.TimeSource{true: payload.SourceGatewayGPS, false: payload.SourceNetwork}[hasGPS]
		if !u.HasPosition || !p.HasTs || p.TsNs != want || p.Source != source || p.Seq != uint32(up["fCnt"].(uint32)) {
			t.Fatalf("got %+v, want ts %d from %v", p, want, source)
		}
	})
}
