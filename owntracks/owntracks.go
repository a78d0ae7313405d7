// Package owntracks republishes edgefence's transitions of devices that
// report in OwnTracks format as OwnTracks region events (_type
// transition) on owntracks/<user>/<device>/event, where the OwnTracks
// apps, Recorder and Frontend show them (docs/dashboard.md).
package owntracks

import (
	"encoding/json"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/ingest"
)

// maxDevices bounds the devices whose OwnTracks topic is remembered.
const maxDevices = 100_000

// Events remembers which devices report over OwnTracks topics and turns
// their transitions into OwnTracks transition messages.
type Events struct {
	filters []ingest.TelemetryFilter
	fences  func() *fence.Set

	mu      sync.RWMutex
	devices map[string]device // by device id
	full    bool              // maxDevices reached: newer devices get no events
}

// device is where a device publishes, and its tracker id.
type device struct {
	topic string // owntracks/<user>/<device>
	tid   string // as its locations give it, or as the apps derive it from the topic
}

// New returns Events for the telemetry filters (to tell device ids the
// way the ingest path does) and the current fences (for their names).
func New(filters []ingest.TelemetryFilter, fences func() *fence.Set) *Events {
	return &Events{filters: filters, fences: fences, devices: map[string]device{}}
}

// Seen notes a publish: an OwnTracks location on owntracks/<user>/<device>
// that a telemetry filter takes makes the device's transitions go out as
// OwnTracks events too. It is called for every publish, so it returns
// quickly for anything else.
func (e *Events) Seen(topic string, payload []byte) {
	if !strings.HasPrefix(topic, "owntracks/") || strings.Count(topic, "/") != 2 {
		return
	}
	var id string
	for i := range e.filters {
		if d, ok, err := e.filters[i].Match(topic); ok {
			if err != nil {
				return
			}
			id = d
			break
		}
	}
	if id == "" {
		return
	}
	var msg struct {
		Type string `json:"_type"`
		Tid  string `json:"tid"`
	}
	if json.Unmarshal(payload, &msg) != nil || msg.Type != "location" {
		return
	}
	e.mu.RLock()
	d, ok := e.devices[id]
	e.mu.RUnlock()
	if ok && d.topic == topic && (d.tid == msg.Tid || msg.Tid == "" && d.tid == defaultTid(topic)) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.devices[id]; !ok && len(e.devices) >= maxDevices {
		e.full = true
		return
	}
	tid := msg.Tid
	if tid == "" {
		tid = defaultTid(topic)
	}
	e.devices[id] = device{topic: strings.Clone(topic), tid: strings.Clone(tid)}
}

// defaultTid is the tracker id the OwnTracks apps use when none is set:
// the last two characters of the topic (OwnTracks booklet, JSON, location
// notes), as Recorder and Frontend then show the device too.
func defaultTid(topic string) string {
	r := []rune(topic)
	return string(r[max(len(r)-2, 0):])
}

// transition is what an OwnTracks event needs of a published transition.
type transition struct {
	Device   string  `json:"device"`
	Fence    string  `json:"fence"`
	Type     string  `json:"type"`
	Ts       int64   `json:"ts"`
	ServerTs int64   `json:"server_ts"`
	Lat      float64 `json:"lat"`
	Lon      float64 `json:"lon"`
	Acc      float64 `json:"acc"` // absent when the ping had none
}

// Event is an OwnTracks transition message (the OwnTracks booklet's
// _type transition).
type Event struct {
	Type string  `json:"_type"` // "transition"
	Wtst int64   `json:"wtst"`  // the waypoint's id: see wtst
	Lat  float64 `json:"lat"`
	Lon  float64 `json:"lon"`
	Tst  int64   `json:"tst"` // the transition's time, epoch seconds
	// Acc is the causing ping's accuracy in metres, which the booklet
	// requires; 0 when the ping had none (OwnTracks leaves a zero acc out
	// of a location: zero means unknown there too).
	Acc   float64 `json:"acc"`
	Tid   string  `json:"tid"`
	Event string  `json:"event"` // "enter" or "leave"
	Desc  string  `json:"desc"`  // the fence's name, or its id
	T     string  `json:"t"`     // trigger: "c", a circular (or other) region
	Rid   string  `json:"rid"`   // region id: the fence id
}

// Transition turns a published transition payload into an OwnTracks
// event and its topic, when the device reports over OwnTracks and the
// transition is an ENTER or EXIT (OwnTracks has no DWELL).
func (e *Events) Transition(payload []byte) (topic string, event []byte, ok bool) {
	var t transition
	if len(payload) == 0 || json.Unmarshal(payload, &t) != nil {
		return "", nil, false
	}
	var kind string
	switch t.Type {
	case "ENTER":
		kind = "enter"
	case "EXIT":
		kind = "leave"
	default:
		return "", nil, false
	}
	e.mu.RLock()
	d, known := e.devices[t.Device]
	e.mu.RUnlock()
	if !known {
		return "", nil, false
	}
	desc := t.Fence
	if f := e.fences().ByID(t.Fence); f != nil && f.Name != "" {
		desc = f.Name
	}
	ev := Event{
		Type: "transition", Wtst: wtst(t.Fence), Lat: t.Lat, Lon: t.Lon,
		// The device's own clock, as the OwnTracks apps stamp their events.
		Tst: t.Ts / 1000, Acc: t.Acc, Tid: d.tid, Event: kind, Desc: desc, T: "c", Rid: t.Fence,
	}
	b, err := json.Marshal(&ev)
	if err != nil {
		return "", nil, false
	}
	return d.topic + "/event", b, true
}

// wtst stands in for the waypoint's creation time, which OwnTracks uses
// as a waypoint's identity: a fence has none, so it is a hash of the
// fence id, the same for every event of the fence, before 2001.
func wtst(fenceID string) int64 {
	h := fnv.New32a()
	h.Write([]byte(fenceID))
	return int64(h.Sum32() % 1_000_000_000)
}

// Full reports whether the device table is full (newer devices get no
// events).
func (e *Events) Full() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.full
}
