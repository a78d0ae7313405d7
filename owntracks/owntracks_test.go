package owntracks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = 5 * time.Second

type event struct {
	Type  string  `json:"_type"`
	Wtst  int64   `json:"wtst"`
	Lat   float64 `json:"lat"`
	Lon   float64 `json:"lon"`
	Tst   int64   `json:"tst"`
	Acc   float64 `json:"acc"`
	Tid   string  `json:"tid"`
	Event string  `json:"event"`
	Desc  string  `json:"desc"`
	T     string  `json:"t"`
	Rid   string  `json:"rid"`
}

// A phone reporting over OwnTracks that walks into the museum and out
// again gets an OwnTracks enter and leave event on its own event topic,
// as the OwnTracks apps and Recorder read them, with every field the
// booklet's _type transition has: acc the causing location's, tid its
// own or, when its locations have none, the last two characters of the
// topic, as the apps default it; a tracker reporting in the canonical
// format gets none.
func TestTransitionsBecomeOwnTracksEvents(t *testing.T) {
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", ""
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.OwnTracksEvents = true
	cfg.Engine.MaxSpeed = 0 // the fixtures jump kilometres in a second
	cfg.CloseTimeout = wait
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	recorder := mqtttest.Connect(t, srv.MQTTAddr(), "recorder", wait)
	recorder.Subscribe("owntracks/+/+/event", "geofence/#")
	phone := mqtttest.Connect(t, srv.MQTTAddr(), "phone", wait)
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)

	tst := time.Now().Unix() - 60
	tracker.Publish("devices/truck-1/telemetry", 1, fmt.Appendf(nil, `{"lat":52.52,"lon":13.40,"ts":%d}`, tst*1000))
	phone.Publish("owntracks/alice/phone", 1, fmt.Appendf(nil, `{"_type":"location","lat":52.52,"lon":13.40,"acc":12,"tst":%d,"tid":"ap"}`, tst))
	// A minute later, as phones report: a fix with an accuracy that
	// follows one within 10 s would need a second to agree (docs/fences.md).
	phone.Publish("owntracks/alice/phone", 1, fmt.Appendf(nil, `{"_type":"location","lat":52.50,"lon":13.30,"acc":35,"tst":%d,"tid":"ap"}`, tst+60))
	phone.Publish("owntracks/bob/tablet", 1, fmt.Appendf(nil, `{"_type":"location","lat":52.52,"lon":13.40,"acc":8,"tst":%d}`, tst))

	got := map[string][]event{}
	for len(got["owntracks/alice/phone/event"]) < 2 || len(got["owntracks/bob/tablet/event"]) < 1 {
		m := recorder.Next("OwnTracks events of alice/phone and bob/tablet")
		if m.Topic[:10] != "owntracks/" {
			continue // geofence/...: the server's own
		}
		var ev event
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			t.Fatalf("%s: %v", m.Payload, err)
		}
		for _, field := range []string{`"acc":`, `"tid":`, `"wtst":`, `"tst":`, `"event":`, `"lat":`, `"lon":`, `"desc":`, `"t":`, `"rid":`} {
			if !strings.Contains(string(m.Payload), field) {
				t.Errorf("%s: no %s", m.Payload, field)
			}
		}
		got[m.Topic] = append(got[m.Topic], ev)
	}
	enter, leave := got["owntracks/alice/phone/event"][0], got["owntracks/alice/phone/event"][1]
	want := event{Type: "transition", Wtst: enter.Wtst, Lat: 52.52, Lon: 13.40, Tst: tst, Acc: 12, Tid: "ap", Event: "enter", Desc: "Museumsinsel", T: "c", Rid: "zone-museumsinsel"}
	if enter != want {
		t.Errorf("enter event\n got  %+v\n want %+v", enter, want)
	}
	want.Event, want.Tst, want.Lat, want.Lon, want.Acc = "leave", tst+60, 52.50, 13.30, 35
	if leave != want || enter.Wtst == 0 {
		t.Errorf("leave event\n got  %+v\n want %+v (same wtst as the enter, not 0)", leave, want)
	}
	want = event{Type: "transition", Wtst: enter.Wtst, Lat: 52.52, Lon: 13.40, Tst: tst, Acc: 8, Tid: "et", Event: "enter", Desc: "Museumsinsel", T: "c", Rid: "zone-museumsinsel"}
	if tablet := got["owntracks/bob/tablet/event"][0]; tablet != want {
		t.Errorf("bob's tablet, no tid of its own\n got  %+v\n want %+v (tid: the topic's last two characters)", tablet, want)
	}
	// Nothing else on an event topic: truck-1 reports in the canonical format.
	for _, m := range recorder.Sync() {
		if m.Topic != "owntracks/alice/phone/event" && len(m.Topic) > 10 && m.Topic[:10] == "owntracks/" {
			t.Errorf("unexpected event %s %s", m.Topic, m.Payload)
		}
	}
}
