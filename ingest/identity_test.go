package ingest

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The topic's device is the device, on every kind of filter: a ping is
// only ever accepted as the device its topic names (a LoRaWAN topic: the
// DevEUI or device id level, the body's equal to it in any case), whatever
// id the body carries, escaped or not.
func TestPropertyAcceptedOnlyAsTheTopicsDevice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r, eng, rej := newLoRaReader(t, "devices/+/telemetry", "owntracks/+/+", "application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn")
		ids := rapid.SampledFrom([]string{"truck-1", "truck-2", "0101010101010101", "0101010101010101", "TRUCK-1", "a/b", "x\u0001", "", "d\u00e9v"})
		topicID := rapid.StringMatching(`[a-z0-9-]{1,12}`).Draw(t, "topic id")
		if rapid.Bool().Draw(t, "topic id from the list") {
			topicID = rapid.SampledFrom([]string{"truck-1", "0101010101010101", "dev-a"}).Draw(t, "listed topic id")
		}
		style := rapid.IntRange(0, 4).Draw(t, "style")
		want := topicID // the device the topic names
		if style == 1 {
			want = "u-" + topicID
		}
		bodyID := ids.Draw(t, "body id")
		if rapid.Bool().Draw(t, "body id is the topic's") {
			bodyID = want
		}
		var topic string
		var body []byte
		switch style {
		case 0:
			topic, body = "devices/"+topicID+"/telemetry", csBody(bodyID, rapid.Bool().Draw(t, "escaped"))
		case 1:
			topic, body = "owntracks/u/"+topicID, csBody(bodyID, false)
		case 2:
			topic, body = "devices/"+topicID+"/telemetry", ttBody(bodyID)
		case 3:
			topic, body = "application/app/device/"+topicID+"/event/up", csBody(bodyID, rapid.Bool().Draw(t, "escaped"))
		default:
			topic, body = "v3/app@ttn/devices/"+topicID+"/up", ttBody(bodyID)
		}
		id, pos, at, out := r.Read(topic, body, "test")
		lorawanTopic := style > 2
		switch {
		case out == Accepted && lorawanTopic && !strings.EqualFold(id, topicID):
			t.Fatalf("%s with body id %q: accepted as %q", topic, bodyID, id)
		case out == Accepted && !lorawanTopic && id != want:
			t.Fatalf("%s with body id %q: accepted as %q, want %q", topic, bodyID, id, want)
		case out == Accepted:
			r.Submit(1, true, &pos, id, at)
		case bodyID == want && out != Accepted:
			t.Fatalf("%s with its own id in the body: %v", topic, out)
		}
		for _, p := range eng.pings {
			if p.Device != id {
				t.Fatalf("ping as %q", p.Device)
			}
		}
		for _, rt := range rej.topics {
			if dev, _, _ := strings.Cut(rt, " "); strings.ContainsAny(dev, "/+#\x01") {
				t.Fatalf("reported under %q", dev)
			}
		}
	})
}

// csBody is a ChirpStack uplink naming devEui id, spelled with JSON
// escapes when escaped.
func csBody(id string, escaped bool) []byte {
	q, _ := json.Marshal(id)
	if escaped {
		var b strings.Builder
		b.WriteByte('"')
		for _, c := range id {
			b.WriteString(jsonEscape(c))
		}
		b.WriteByte('"')
		q = []byte(b.String())
	}
	return []byte(`{"deviceInfo":{"devEui":` + string(q) + `},"fCnt":1,"object":{"lat":52.5,"lon":13.4}}`)
}

// jsonEscape spells c as a JSON \u escape.
func jsonEscape(c rune) string {
	const hex = "0123456789abcdef"
	if c > 0xffff {
		return string(c)
	}
	return `\u` + string([]byte{hex[c>>12&15], hex[c>>8&15], hex[c>>4&15], hex[c&15]})
}

// ttBody is a The Things Stack uplink of device_id id.
func ttBody(id string) []byte {
	q, _ := json.Marshal(id)
	return []byte(`{"end_device_ids":{"device_id":` + string(q) + `},"uplink_message":{"f_cnt":1,"decoded_payload":{"lat":52.5,"lon":13.4}}}`)
}

// A mapping that takes the id from a field the topic does not name makes a
// body-named filter; the topic's DevEUI must still be the body's.
func TestBodyNamedFilter(t *testing.T) {
	r, _, rej := newLoRaReader(t, "application/+/device/+/event/up=chirpstack,id=deviceName", "devices/+/telemetry")
	if !r.Filters()[0].BodyNamed() || r.Filters()[1].BodyNamed() {
		t.Fatal("BodyNamed: want the deviceName mapping only")
	}
	body := []byte(`{"deviceInfo":{"devEui":"02","deviceName":"truck-9"},"fCnt":1,"object":{"lat":52.5,"lon":13.4}}`)
	if id, _, _, out := r.Read("application/a/device/02/event/up", body, "ns"); out != Accepted || id != "truck-9" {
		t.Fatalf("matching DevEUI: %q %v", id, out)
	}
	if _, _, _, out := r.Read("application/a/device/01/event/up", body, "ns"); out != Forbidden {
		t.Fatalf("another DevEUI: %v, want Forbidden", out)
	}
	slash := []byte(`{"deviceInfo":{"devEui":"03","deviceName":"a/b"},"fCnt":1,"object":{"lat":52.5,"lon":13.4}}`)
	if _, _, _, out := r.Read("application/a/device/03/event/up", slash, "ns"); out != Rejected {
		t.Fatalf("a name with a slash: %v, want Rejected", out)
	}
	if got := strings.Join(rej.topics, "; "); got != "a-01 device_mismatch; a-03 device_id" {
		t.Errorf("rejects: %s", got)
	}
}

// FuzzReaderTopicIsTheDevice: whatever the body, a publish on a device's
// topic is accepted as that device or not at all, and is never reported
// under an id that is not a usable topic level.
func FuzzReaderTopicIsTheDevice(f *testing.F) {
	f.Add("truck-1", []byte(`{"deviceInfo":{"devEui":"truck-2"},"fCnt":1,"object":{"lat":1,"lon":2}}`))
	f.Add("dev-a", []byte(`{"end_device_ids":{"device_id":"dev-b"},"uplink_message":{"f_cnt":1,"decoded_payload":{"lat":1,"lon":2}}}`))
	f.Add("0101", []byte(`{"deviceInfo":{"devEui":"0101"},"fCnt":1,"object":{"lat":1,"lon":2}}`))
	f.Add("x", []byte(`{"deviceInfo":{"devEui":"a\u002fb"},"fCnt":1,"object":{"lat":1,"lon":2}}`))
	f.Add("t", []byte(`{"_type":"location","lat":1,"lon":2,"tst":1,"topic":"owntracks/a/b"}`))
	f.Fuzz(func(t *testing.T, level string, body []byte) {
		if level == "" || strings.ContainsAny(level, "/+#") || len(level) > MaxDeviceID {
			return // not a topic with a device level
		}
		r, _, rej := newLoRaReader(t, "devices/+/telemetry", "application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn")
		for _, topic := range []string{"devices/" + level + "/telemetry", "application/a/device/" + level + "/event/up", "v3/a/devices/" + level + "/up"} {
			id, _, _, out := r.Read(topic, body, "fuzz")
			if out != Accepted {
				continue
			}
			if strings.HasPrefix(topic, "devices/") && id != level || !strings.HasPrefix(topic, "devices/") && !strings.EqualFold(id, level) {
				t.Fatalf("%s: accepted as %q", topic, id)
			}
		}
		for _, rt := range rej.topics {
			if dev := rt[:strings.LastIndexByte(rt, ' ')]; dev != "" && dev != level && dev != "a-"+level {
				t.Fatalf("reported under %q", dev)
			}
		}
	})
}
