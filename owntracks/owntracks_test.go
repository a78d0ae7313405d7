package owntracks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
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
	Tid   string  `json:"tid"`
	Event string  `json:"event"`
	Desc  string  `json:"desc"`
	T     string  `json:"t"`
	Rid   string  `json:"rid"`
}

// A phone reporting over OwnTracks that walks into the museum and out
// again gets an OwnTracks enter and leave event on its own event topic,
// as the OwnTracks apps and Recorder read them; a tracker reporting in
// the canonical format gets none.
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

	tst := time.Now().Unix()
	tracker.Publish("devices/truck-1/telemetry", 1, fmt.Appendf(nil, `{"lat":52.52,"lon":13.40,"ts":%d}`, tst*1000))
	phone.Publish("owntracks/alice/phone", 1, fmt.Appendf(nil, `{"_type":"location","lat":52.52,"lon":13.40,"tst":%d,"tid":"ap"}`, tst))
	phone.Publish("owntracks/alice/phone", 1, fmt.Appendf(nil, `{"_type":"location","lat":52.50,"lon":13.30,"tst":%d,"tid":"ap"}`, tst+1))

	var got []event
	var transitions int
	for len(got) < 2 {
		m := recorder.Next("OwnTracks events of alice/phone")
		if m.Topic != "owntracks/alice/phone/event" {
			transitions++ // geofence/...: the server's own, for truck-1 and alice-phone
			continue
		}
		var ev event
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			t.Fatalf("%s: %v", m.Payload, err)
		}
		got = append(got, ev)
	}
	enter, leave := got[0], got[1]
	want := event{Type: "transition", Wtst: enter.Wtst, Lat: 52.52, Lon: 13.40, Tst: tst, Tid: "ap", Event: "enter", Desc: "Museumsinsel", T: "c", Rid: "zone-museumsinsel"}
	if enter != want {
		t.Errorf("enter event\n got  %+v\n want %+v", enter, want)
	}
	want.Event, want.Tst, want.Lat, want.Lon = "leave", tst+1, 52.50, 13.30
	if leave != want || enter.Wtst == 0 {
		t.Errorf("leave event\n got  %+v\n want %+v (same wtst as the enter, not 0)", leave, want)
	}
	// Nothing else on an event topic: truck-1 reports in the canonical format.
	for _, m := range recorder.Sync() {
		if m.Topic != "owntracks/alice/phone/event" && len(m.Topic) > 10 && m.Topic[:10] == "owntracks/" {
			t.Errorf("unexpected event %s %s", m.Topic, m.Payload)
		}
	}
}
