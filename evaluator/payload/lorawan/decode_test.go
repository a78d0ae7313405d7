package lorawan_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit returns the fixture with fn applied to it as a generic JSON tree.
func edit(t testing.TB, name string, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func ns(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

func decode(t testing.TB, data []byte, f payload.Format, m *lorawan.Mapping) (lorawan.Uplink, error) {
	t.Helper()
	var d lorawan.Decoder
	return d.Decode(data, f, m)
}

// The documented ChirpStack v4 uplink, field by field.
func TestChirpStackFixture(t *testing.T) {
	for _, f := range []payload.Format{payload.ChirpStack, payload.Auto} {
		u, err := decode(t, fixture(t, "chirpstack-v4-up.json"), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := u.Position
		if u.Format != payload.ChirpStack || !u.HasPosition || string(u.Device) != "0101010101010101" || u.DeviceEscaped ||
			string(u.Session) != "00189440" {
			t.Fatalf("%v: got %+v", f, u)
		}
		if p.Lat != 52.520008 || p.Lon != 13.404954 || !p.HasAcc || p.Acc != 8.5 {
			t.Errorf("position %+v", p)
		}
		if !p.HasSeq || p.Seq != 10 {
			t.Errorf("fCnt %d %v, want 10", p.Seq, p.HasSeq)
		}
		// No device stamp in the object: the gateway's GPS time.
		if !p.HasTs || p.TsNs != ns("2026-12-01T10:00:01.210000123Z") || p.Source != payload.SourceGatewayGPS {
			t.Errorf("time %d %v %v, want the gwTime", p.TsNs, p.HasTs, p.Source)
		}
	}
	u, err := decode(t, fixture(t, "chirpstack-v4-up.json"), payload.ChirpStack, &lorawan.Mapping{ID: "deviceName"})
	if err != nil || string(u.Device) != "truck-42" {
		t.Fatalf("id=deviceName: %q %v", u.Device, err)
	}
}

// The documented The Things Stack v3 uplink, field by field.
func TestTheThingsStackFixture(t *testing.T) {
	for _, f := range []payload.Format{payload.TTN, payload.Auto} {
		u, err := decode(t, fixture(t, "ttn-v3-up.json"), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := u.Position
		if u.Format != payload.TTN || !u.HasPosition || string(u.Device) != "dev1" || string(u.Session) != "AXA50IIb8oD5bSv3zEOWtg==" {
			t.Fatalf("%v: got %+v", f, u)
		}
		if p.Lat != 52.520008 || p.Lon != 13.404954 || !p.HasAcc || p.Acc != 12 || !p.HasSeq || p.Seq != 42 {
			t.Errorf("position %+v", p)
		}
		if !p.HasTs || p.TsNs != ns("2026-12-01T10:00:01.3Z") || p.Source != payload.SourceGatewayGPS {
			t.Errorf("time %d %v %v, want the gps_time", p.TsNs, p.HasTs, p.Source)
		}
	}
	u, err := decode(t, fixture(t, "ttn-v3-up.json"), payload.TTN, &lorawan.Mapping{ID: "dev_eui"})
	if err != nil || string(u.Device) != "0004A30B001C0530" {
		t.Fatalf("id=dev_eui: %q %v", u.Device, err)
	}
}

// The event time is the best clock the uplink carries, in the documented
// order: device stamp, earliest GPS gateway time, network server.
func TestTimeSourceOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   string
		edit   func(m map[string]any)
		want   int64
		source payload.TimeSource
	}{
		{"chirpstack device stamp (epoch s)", "chirpstack-v4-up.json", func(m map[string]any) {
			obj(m, "object")["time"] = 1764583200
		}, 1764583200e9, payload.SourceDevice},
		{"chirpstack device stamp (epoch ms)", "chirpstack-v4-up.json", func(m map[string]any) {
			obj(m, "object")["timestamp"] = 1764583200123
		}, 1764583200123e6, payload.SourceDevice},
		{"chirpstack device stamp (RFC 3339)", "chirpstack-v4-up.json", func(m map[string]any) {
			obj(m, "object")["time"] = "2026-12-01T10:00:00.5+01:00"
		}, ns("2026-12-01T09:00:00.5Z"), payload.SourceDevice},
		{"chirpstack legacy rxInfo time", "chirpstack-v4-up.json", func(m map[string]any) {
			rx := m["rxInfo"].([]any)[0].(map[string]any)
			rx["time"], rx["gwTime"] = rx["gwTime"], nil
		}, ns("2026-12-01T10:00:01.210000123Z"), payload.SourceGatewayGPS},
		{"chirpstack without GPS: the event time", "chirpstack-v4-up.json", func(m map[string]any) {
			delete(m["rxInfo"].([]any)[0].(map[string]any), "gwTime")
		}, ns("2026-12-01T10:00:01.512345Z"), payload.SourceNetwork},
		{"chirpstack without GPS nor time: nsTime", "chirpstack-v4-up.json", func(m map[string]any) {
			delete(m["rxInfo"].([]any)[0].(map[string]any), "gwTime")
			delete(m, "time")
		}, ns("2026-12-01T10:00:01.482915Z"), payload.SourceNetwork},
		{"ttn without GPS: the network server", "ttn-v3-up.json", func(m map[string]any) {
			delete(obj(m, "uplink_message")["rx_metadata"].([]any)[0].(map[string]any), "gps_time")
		}, ns("2026-12-01T10:00:01.702311Z"), payload.SourceNetwork},
		{"ttn without GPS nor NS: the application server", "ttn-v3-up.json", func(m map[string]any) {
			up := obj(m, "uplink_message")
			delete(up["rx_metadata"].([]any)[0].(map[string]any), "gps_time")
			delete(up, "received_at")
		}, ns("2026-12-01T10:00:01.902311Z"), payload.SourceNetwork},
		{"ttn device stamp", "ttn-v3-up.json", func(m map[string]any) {
			obj(obj(m, "uplink_message"), "decoded_payload")["ts"] = 1764583200123
		}, 1764583200123e6, payload.SourceDevice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := decode(t, edit(t, tc.file, tc.edit), payload.Auto, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p := u.Position; !p.HasTs || p.TsNs != tc.want || p.Source != tc.source {
				t.Fatalf("got %d %v %v, want %d %v", p.TsNs, p.HasTs, p.Source, tc.want, tc.source)
			}
		})
	}
	// No clock at all.
	u, err := decode(t, edit(t, "chirpstack-v4-up.json", func(m map[string]any) { delete(m, "time"); delete(m, "rxInfo") }), payload.Auto, nil)
	if err != nil || u.Position.HasTs || u.Position.Source != payload.SourceNone {
		t.Fatalf("no clock: %+v %v", u.Position, err)
	}
}

// The common layouts of a decoded object, and the mappings for the rest.
func TestLayoutsAndMappings(t *testing.T) {
	mapped := func(kvs ...string) *lorawan.Mapping {
		var m lorawan.Mapping
		for _, kv := range kvs {
			if err := m.Set(payload.ChirpStack, kv); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		return &m
	}
	for _, tc := range []struct {
		name     string
		object   string
		mapping  *lorawan.Mapping
		lat, lon float64
		acc      float64 // -1: none
		err      error
		noPos    bool
	}{
		{"latitude/longitude", `{"latitude":52.1,"longitude":13.1,"accuracy":5}`, nil, 52.1, 13.1, 5, nil, false},
		{"lat/lon", `{"lat":52.1,"lon":13.1}`, nil, 52.1, 13.1, -1, nil, false},
		{"lat/lng with acc", `{"lat":52.1,"lng":13.1,"acc":3}`, nil, 52.1, 13.1, 3, nil, false},
		{"Dragino Latitude/Longitude as strings", `{"Latitude":"52.100000","Longitude":"13.100000","BatV":3.9}`, nil, 52.1, 13.1, -1, nil, false},
		{"Digital Matter", `{"latitudeDeg":52.1,"longitudeDeg":13.1,"inTrip":true}`, nil, 52.1, 13.1, -1, nil, false},
		{"nested gps", `{"gps":{"lat":52.1,"lng":13.1},"battery":90}`, nil, 52.1, 13.1, -1, nil, false},
		{"nested location", `{"location":{"latitude":52.1,"longitude":13.1,"accuracy":9}}`, nil, 52.1, 13.1, 9, nil, false},
		{"top level wins over nested", `{"lat":1,"lon":2,"gps":{"lat":3,"lon":4}}`, nil, 1, 2, -1, nil, false},
		{"heartbeat: no position", `{"battery":3.6,"temperature":21}`, nil, 0, 0, -1, nil, true},
		{"half a pair", `{"lat":52.1}`, nil, 0, 0, -1, payload.MissingLon, false},
		{"lat out of range", `{"latitude":91,"longitude":0}`, nil, 0, 0, -1, payload.LatRange, false},
		{"lon wrong type", `{"latitude":1,"longitude":true}`, nil, 0, 0, -1, payload.WrongType, false},
		{"not a number string", `{"latitude":"north","longitude":1}`, nil, 0, 0, -1, payload.WrongType, false},
		{"negative accuracy", `{"latitude":1,"longitude":1,"accuracy":-2}`, nil, 0, 0, -1, payload.AccRange, false},
		{"duplicate key", `{"latitude":1,"latitude":2,"longitude":1}`, nil, 0, 0, -1, payload.DuplicateKey, false},
		{"mapped nested path", `{"gnss":{"fix":{"y":52.1,"x":13.1,"hacc":4}}}`, mapped("lat=gnss.fix.y", "lon=gnss.fix.x", "acc=gnss.fix.hacc"), 52.1, 13.1, 4, nil, false},
		{"mapped gps.lat/gps.lng", `{"gps":{"lat":52.1,"lng":13.1}}`, mapped("lat=gps.lat", "lon=gps.lng"), 52.1, 13.1, -1, nil, false},
		{"mapped but absent: no position", `{"battery":1}`, mapped("lat=gps.lat", "lon=gps.lng"), 0, 0, -1, nil, true},
		{"mapped replaces the layouts", `{"latitude":1,"longitude":2}`, mapped("lat=p.a", "lon=p.b"), 0, 0, -1, nil, true},
		{"mapped half present", `{"gps":{"lat":1}}`, mapped("lat=gps.lat", "lon=gps.lng"), 0, 0, -1, payload.MissingLon, false},
		{"mapped through a non-object", `{"gps":7}`, mapped("lat=gps.lat", "lon=gps.lng"), 0, 0, -1, payload.WrongType, false},
		{"escaped keys", `{"l\u0061titude":52.1,"longitude":13.1}`, nil, 52.1, 13.1, -1, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := edit(t, "chirpstack-v4-up.json", func(m map[string]any) { m["object"] = json.RawMessage(tc.object) })
			u, err := decode(t, data, payload.ChirpStack, tc.mapping)
			if err != tc.err {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if u.HasPosition == tc.noPos {
				t.Fatalf("HasPosition %v", u.HasPosition)
			}
			p := u.Position
			if tc.noPos {
				return
			}
			if p.Lat != tc.lat || p.Lon != tc.lon || p.HasAcc != (tc.acc >= 0) || p.HasAcc && p.Acc != tc.acc {
				t.Fatalf("got %+v", p)
			}
		})
	}
}

func TestMappingSet(t *testing.T) {
	var m lorawan.Mapping
	for _, kv := range []string{"lat=gps.lat", "lon=gps.lng", "acc=gps.hdop", "ts=none", "id=deviceName"} {
		if err := m.Set(payload.ChirpStack, kv); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.String(); got != "lat=gps.lat,lon=gps.lng,acc=gps.hdop,ts=none,id=deviceName" {
		t.Errorf("String() = %q", got)
	}
	for _, tc := range []struct {
		f  payload.Format
		kv string
	}{
		{payload.ChirpStack, "lat"}, {payload.ChirpStack, "lat="}, {payload.ChirpStack, "lat=a..b"},
		{payload.ChirpStack, "alt=x"}, {payload.ChirpStack, "id=device_id"}, {payload.TTN, "id=devEui"},
	} {
		var m lorawan.Mapping
		if err := m.Set(tc.f, tc.kv); err == nil {
			t.Errorf("%v %q accepted", tc.f, tc.kv)
		}
	}
	half := lorawan.Mapping{Lat: lorawan.Path{"a"}}
	if half.Check() == nil {
		t.Error("lat without lon accepted")
	}
}

// Not every message on a network server's topics is an uplink: those are
// routed but not evaluated (payload.Ignored), and bad ones are rejected.
func TestNotUplinksAndBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		f    payload.Format
		want error
	}{
		{"chirpstack join", `{"deduplicationId":"x","time":"2026-12-01T10:00:00Z","deviceInfo":{"devEui":"01"},"devAddr":"00189440"}`, payload.ChirpStack, payload.Ignored},
		{"ttn join-accept", `{"end_device_ids":{"device_id":"dev1"},"join_accept":{"session_key_id":"AX"}}`, payload.TTN, payload.Ignored},
		{"not json", `{"deviceInfo":`, payload.ChirpStack, payload.NotJSON},
		{"trailing garbage", `{"deviceInfo":{}} x`, payload.ChirpStack, payload.NotJSON},
		{"not an object", `[1]`, payload.ChirpStack, payload.NotObject},
		{"duplicate top key", `{"fCnt":1,"fCnt":2,"deviceInfo":{}}`, payload.ChirpStack, payload.DuplicateKey},
		{"fCnt not a counter", `{"fCnt":-1,"deviceInfo":{}}`, payload.ChirpStack, payload.WrongType},
		{"fCnt fraction", `{"fCnt":1.5,"deviceInfo":{}}`, payload.ChirpStack, payload.WrongType},
		{"bad gwTime", `{"fCnt":1,"deviceInfo":{},"rxInfo":[{"gwTime":"yesterday"}]}`, payload.ChirpStack, payload.WrongType},
		{"rxInfo not an array", `{"fCnt":1,"deviceInfo":{},"rxInfo":{}}`, payload.ChirpStack, payload.WrongType},
		{"deviceInfo not an object", `{"fCnt":1,"deviceInfo":3}`, payload.ChirpStack, payload.WrongType},
		{"device stamp wrong type", `{"fCnt":1,"deviceInfo":{},"object":{"lat":1,"lon":2,"time":true}}`, payload.ChirpStack, payload.WrongType},
		{"too deep", `{"fCnt":1,"deviceInfo":{},"object":{"x":` + deep(300) + `}}`, payload.ChirpStack, payload.NotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decode(t, []byte(tc.in), tc.f, nil); err != tc.want {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	var d lorawan.Decoder
	if _, err := d.Decode(make([]byte, payload.DefaultMaxSize+1), payload.ChirpStack, nil); err != payload.TooLarge {
		t.Fatalf("too large: %v", err)
	}
	// A device id with escapes is reported as such, for the caller to decode.
	u, err := decode(t, []byte(`{"fCnt":1,"deviceInfo":{"devEui":"a\/b"}}`), payload.ChirpStack, nil)
	if err != nil || string(u.Device) != `a\/b` || !u.DeviceEscaped {
		t.Fatalf("escaped id: %q %v %v", u.Device, u.DeviceEscaped, err)
	}
}

func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

// A registry location in The Things Stack's locations is where someone
// registered the device, not a fix; a solved one is used when the decoded
// payload has none.
func TestTheThingsStackLocations(t *testing.T) {
	u, err := decode(t, edit(t, "ttn-v3-up.json", func(m map[string]any) {
		delete(obj(m, "uplink_message"), "decoded_payload")
	}), payload.TTN, nil)
	if err != nil || u.HasPosition {
		t.Fatalf("registry location taken as a fix: %+v %v", u, err)
	}
	u, err = decode(t, edit(t, "ttn-v3-up.json", func(m map[string]any) {
		up := obj(m, "uplink_message")
		delete(up, "decoded_payload")
		obj(up, "locations")["frm-payload"] = map[string]any{"latitude": 52.2, "longitude": 13.2, "accuracy": 30, "source": "SOURCE_GPS"}
	}), payload.TTN, nil)
	if err != nil || !u.HasPosition || u.Position.Lat != 52.2 || u.Position.Lon != 13.2 || u.Position.Acc != 30 {
		t.Fatalf("solved location: %+v %v", u, err)
	}
}

// ChirpStack v3's uplinks, with either marshaler, read as the v4 one:
// devEUI in hex whether sent in hex or base64 (what the topic's device
// level spells), the position from object or objectJSON, the gateway's
// GPS time, else publishedAt; deviceName with id=deviceName. Before, the
// ids at the top level were not looked for, and an uplink with a fine
// topic was rejected as having no device id.
func TestChirpStackV3Fixtures(t *testing.T) {
	for _, name := range []string{"chirpstack-v3-up.json", "chirpstack-v3-legacy-up.json"} {
		for _, f := range []payload.Format{payload.ChirpStack, payload.Auto} {
			u, err := decode(t, fixture(t, name), f, nil)
			if err != nil {
				t.Fatalf("%s %v: %v", name, f, err)
			}
			p := u.Position
			if u.Format != payload.ChirpStack || !u.HasPosition || string(u.Device) != "0101010101010101" ||
				string(u.Named) != "0101010101010101" || u.DeviceEscaped || name == "chirpstack-v3-up.json" && len(u.Session) == 0 {
				t.Fatalf("%s %v: got %+v", name, f, u)
			}
			if p.Lat != 52.520008 || p.Lon != 13.404954 || !p.HasAcc || p.Acc != 8.5 || !p.HasSeq || p.Seq != 10 {
				t.Errorf("%s: position %+v", name, p)
			}
			if !p.HasTs || p.TsNs != ns("2026-12-01T10:00:01.210000123Z") || p.Source != payload.SourceGatewayGPS {
				t.Errorf("%s: time %d %v %v, want the gateway's GPS time", name, p.TsNs, p.HasTs, p.Source)
			}
		}
		u, err := decode(t, fixture(t, name), payload.ChirpStack, &lorawan.Mapping{ID: "deviceName"})
		if err != nil || string(u.Device) != "truck-42" || string(u.Named) != "0101010101010101" {
			t.Fatalf("%s id=deviceName: %q %q %v", name, u.Device, u.Named, err)
		}
	}
	// No GPS gateway: the application server's publishedAt.
	noGPS := edit(t, "chirpstack-v3-up.json", func(m map[string]any) {
		delete(m["rxInfo"].([]any)[0].(map[string]any), "time")
	})
	u, err := decode(t, noGPS, payload.ChirpStack, nil)
	if err != nil || u.Position.TsNs != ns("2026-12-01T10:00:01.512345Z") || u.Position.Source != payload.SourceNetwork {
		t.Errorf("without a GPS gateway: %+v %v, want publishedAt from the network", u.Position, err)
	}
	// An objectJSON with escapes beyond the quotes, and one that is not JSON.
	for in, want := range map[string]error{
		`{"devEUI":"0101010101010101","fCnt":1,"objectJSON":"{\"lat\":52.5,\"lon\":13.4,\"note\":\"caf\u00e9 \ud83d\ude9a\\n\"}"}`: nil,
		`{"devEUI":"0101010101010101","fCnt":1,"objectJSON":"{\"lat\":52.5,"}`:                                                     payload.NotJSON,
		`{"devEUI":"0101010101010101","fCnt":1,"objectJSON":"{\"lat\":52.5,\"lon\":13.4} x"}`:                                      payload.NotJSON,
		`{"devEUI":7,"fCnt":1,"object":{"lat":52.5,"lon":13.4}}`:                                                                   payload.WrongType,
	} {
		u, err := decode(t, []byte(in), payload.ChirpStack, nil)
		if err != want || want == nil && (!u.HasPosition || u.Position.Lat != 52.5) {
			t.Errorf("%s: %+v %v, want %v", in, u, err, want)
		}
	}
}

// A wrong_type says which field, at whatever depth: the uplink's key, the
// layout's or the mapping's path; other reasons name none.
func TestDecodeNamesTheWrongTypeField(t *testing.T) {
	cs := func(fn func(m map[string]any)) []byte { return edit(t, "chirpstack-v4-up.json", fn) }
	tt := func(fn func(m map[string]any)) []byte { return edit(t, "ttn-v3-up.json", fn) }
	gps := &lorawan.Mapping{Lat: lorawan.Path{"gps", "lat"}, Lon: lorawan.Path{"gps", "lng"}}
	for _, c := range []struct {
		name string
		in   []byte
		f    payload.Format
		m    *lorawan.Mapping
		want string
	}{
		{"fCnt", cs(func(m map[string]any) { m["fCnt"] = "10" }), payload.ChirpStack, nil, "fCnt"},
		{"deviceInfo", cs(func(m map[string]any) { m["deviceInfo"] = []any{} }), payload.ChirpStack, nil, "deviceInfo"},
		{"rxInfo", cs(func(m map[string]any) { m["rxInfo"] = map[string]any{} }), payload.ChirpStack, nil, "rxInfo"},
		{"gwTime", cs(func(m map[string]any) {
			delete(obj(m, "object"), "time")
			m["rxInfo"].([]any)[0].(map[string]any)["gwTime"] = 7
		}), payload.ChirpStack, nil, "gwTime"},
		{"time", cs(func(m map[string]any) { m["time"] = "yesterday"; m["rxInfo"] = []any{} }), payload.ChirpStack, nil, "time"},
		{"object", cs(func(m map[string]any) { m["object"] = "x" }), payload.ChirpStack, nil, "object"},
		{"latitude", cs(func(m map[string]any) { obj(m, "object")["latitude"] = true }), payload.ChirpStack, nil, "latitude"},
		{"accuracy", cs(func(m map[string]any) { obj(m, "object")["accuracy"] = "far" }), payload.ChirpStack, nil, "accuracy"},
		{"mapping", cs(func(m map[string]any) { m["object"] = map[string]any{"gps": map[string]any{"lat": "n", "lng": 1}} }), payload.ChirpStack, gps, "gps.lat"},
		{"mapping level", cs(func(m map[string]any) { m["object"] = map[string]any{"gps": 5} }), payload.ChirpStack, gps, "gps.lat"},
		{"devEUI v3", []byte(`{"devEUI":7,"fCnt":1,"object":{"lat":1,"lon":1}}`), payload.ChirpStack, nil, "devEUI"},
		{"objectJSON v3", []byte(`{"devEUI":"01","fCnt":1,"objectJSON":{}}`), payload.ChirpStack, nil, "objectJSON"},
		{"objectJSON v3, not an object", []byte(`{"devEUI":"01","fCnt":1,"objectJSON":"[1]"}`), payload.ChirpStack, nil, "objectJSON"},
		{"f_cnt", tt(func(m map[string]any) { obj(m, "uplink_message")["f_cnt"] = -1 }), payload.TTN, nil, "f_cnt"},
		{"rx_metadata", tt(func(m map[string]any) { obj(m, "uplink_message")["rx_metadata"] = 1 }), payload.TTN, nil, "rx_metadata"},
		{"end_device_ids", tt(func(m map[string]any) { m["end_device_ids"] = "x" }), payload.TTN, nil, "end_device_ids"},
		{"lat range", cs(func(m map[string]any) { obj(m, "object")["latitude"] = 91 }), payload.ChirpStack, nil, ""},
	} {
		var d lorawan.Decoder
		d.Decode([]byte(`{"fCnt":"x","deviceInfo":{"devEui":"01"}}`), payload.ChirpStack, nil) // a stale field must not carry over
		m := c.m
		if m == nil {
			m = &lorawan.Mapping{}
		}
		_, err := d.Decode(c.in, c.f, m)
		if got := d.Field(); got != c.want || (c.want != "") != (err == payload.WrongType) {
			t.Errorf("%s: %v, field %q; want %q", c.name, err, got, c.want)
		}
	}
}
