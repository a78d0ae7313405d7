// Package homeassistant announces edgefence's devices and fences to Home
// Assistant by MQTT discovery: each device as a device_tracker (its
// current fence as state, its position as attributes), each fence as a
// sensor of its occupancy; entities are removed when a device is evicted
// or a fence removed, and their availability follows the server
// (docs/dashboard.md). It reads the engine's state every interval and
// publishes what changed, retained.
package homeassistant

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

// DefaultPrefix is Home Assistant's discovery prefix.
const DefaultPrefix = "homeassistant"

// DefaultBase is where the entities' state, attributes and availability
// are published.
const DefaultBase = "edgefence/ha"

// DefaultInterval is how often the engine's state is read.
const DefaultInterval = 2 * time.Second

// Engine is what discovery reads of the engine.
type Engine interface {
	Fleet(visit func(*inspect.DeviceSummary)) error
	Fences() *fence.Set
}

// Broker publishes into the broker and lists its retained topics.
type Broker interface {
	Publish(topic string, payload []byte, retain bool) error
	// Retained returns the topics of the retained messages matching filter.
	Retained(filter string) []string
}

// Config configures discovery.
type Config struct {
	Prefix   string // discovery prefix, DefaultPrefix
	Base     string // state topics, DefaultBase
	Node     string // node id in the discovery topics and the server's device: "edgefence"
	Version  string // the server's version, for the device registry
	Interval time.Duration
	Log      *slog.Logger
}

// Discovery keeps Home Assistant's entities in step with the engine.
type Discovery struct {
	cfg Config
	eng Engine
	brk Broker

	devices map[string]deviceState // what was published, by device id
	fences  map[string]int         // occupancy published, by fence id
	known   map[string]bool        // config topics retained (removed when no longer wanted)

	stop, done chan struct{}
	once       sync.Once
}

type deviceState struct {
	state    string
	lat, lon float64
	has      bool
}

// Start announces the server as available, picks up the entities a
// previous run announced (to remove those no longer there) and starts
// the updates.
func Start(cfg Config, eng Engine, brk Broker) (*Discovery, error) {
	cfg = cfg.filled()
	d := &Discovery{cfg: cfg, eng: eng, brk: brk,
		devices: map[string]deviceState{}, fences: map[string]int{}, known: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, kind := range []string{"device_tracker", "sensor"} {
		for _, t := range brk.Retained(cfg.Prefix + "/" + kind + "/" + cfg.Node + "/+/config") {
			d.known[t] = true
		}
	}
	if err := brk.Publish(d.availability(), []byte("online"), true); err != nil {
		return nil, fmt.Errorf("home assistant availability: %w", err)
	}
	d.update()
	go d.run()
	return d, nil
}

// filled is c with the defaults of what it leaves unset.
func (c Config) filled() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Base == "" {
		c.Base = DefaultBase
	}
	if c.Node == "" {
		c.Node = "edgefence"
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Topics returns the filters discovery publishes on, those of the
// configuration Start runs with (defaults filled in): no client may
// publish there.
func (c *Config) Topics() []string {
	f := c.filled()
	return []string{f.Prefix + "/device_tracker/" + f.Node + "/#", f.Prefix + "/sensor/" + f.Node + "/#", f.Base + "/#"}
}

func (d *Discovery) availability() string { return d.cfg.Base + "/status" }

func (d *Discovery) run() {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.update()
		}
	}
}

// Close stops the updates and marks every entity unavailable.
func (d *Discovery) Close() error {
	var err error
	d.once.Do(func() {
		close(d.stop)
		<-d.done
		err = d.brk.Publish(d.availability(), []byte("offline"), true)
	})
	return err
}

// update publishes what changed since the last one.
func (d *Discovery) update() {
	set := d.eng.Fences()
	seen := make(map[string]bool, len(d.devices))
	occupancy := map[string]int{}
	var errs []error
	err := d.eng.Fleet(func(s *inspect.DeviceSummary) {
		seen[s.Device] = true
		st := deviceState{state: "not_home", lat: s.Lat, lon: s.Lon, has: s.HasPosition}
		for _, f := range s.Inside {
			occupancy[f]++
		}
		if len(s.Inside) > 0 {
			st.state = s.Inside[0] // by fence id: one of them, the same each time
		}
		if old, ok := d.devices[s.Device]; ok && old == st {
			return
		}
		if err := d.publishDevice(s.Device, st, len(s.Inside), !hasKey(d.devices, s.Device)); err != nil {
			errs = append(errs, err)
			return
		}
		d.devices[s.Device] = st
	})
	if err != nil {
		return // shutting down
	}
	for id := range d.devices {
		if !seen[id] { // evicted: the engine forgot it
			base := d.deviceBase(id)
			errs = append(errs, d.remove(d.trackerTopic(id)),
				d.brk.Publish(base+"/state", nil, true), d.brk.Publish(base+"/attributes", nil, true))
			delete(d.devices, id)
		}
	}
	for _, f := range set.Fences() {
		n, ok := d.fences[f.ID]
		if !ok {
			if err := d.publishConfig(d.sensorTopic(f.ID), d.sensorConfig(f)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if !ok || n != occupancy[f.ID] {
			errs = append(errs, d.brk.Publish(d.fenceBase(f.ID)+"/state", []byte(fmt.Sprint(occupancy[f.ID])), true))
			d.fences[f.ID] = occupancy[f.ID]
		}
	}
	for id := range d.fences {
		if set.ByID(id) == nil { // removed from the fence set
			errs = append(errs, d.remove(d.sensorTopic(id)), d.brk.Publish(d.fenceBase(id)+"/state", nil, true))
			delete(d.fences, id)
		}
	}
	// Entities of a previous run that are no longer there.
	for t := range d.known {
		if !d.wanted(t, set) {
			errs = append(errs, d.remove(t))
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.cfg.Log.Warn("home assistant discovery: publish failed", "error", err)
	}
}

func hasKey(m map[string]deviceState, k string) bool { _, ok := m[k]; return ok }

// wanted reports whether a retained config topic still names an entity.
func (d *Discovery) wanted(topic string, set *fence.Set) bool {
	for id := range d.devices {
		if d.trackerTopic(id) == topic {
			return true
		}
	}
	for _, f := range set.Fences() {
		if d.sensorTopic(f.ID) == topic {
			return true
		}
	}
	return false
}

func (d *Discovery) publishConfig(topic string, cfg map[string]any) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := d.brk.Publish(topic, b, true); err != nil {
		return err
	}
	d.known[topic] = true
	return nil
}

// remove deletes an entity: an empty retained config.
func (d *Discovery) remove(topic string) error {
	delete(d.known, topic)
	return d.brk.Publish(topic, nil, true)
}

func (d *Discovery) publishDevice(id string, st deviceState, inside int, first bool) error {
	base := d.deviceBase(id)
	if first || !d.known[d.trackerTopic(id)] {
		if err := d.publishConfig(d.trackerTopic(id), d.trackerConfig(id)); err != nil {
			return err
		}
	}
	attrs := map[string]any{"fences_inside": inside}
	if st.has {
		attrs["latitude"], attrs["longitude"] = st.lat, st.lon
		// The engine keeps positions to ±0.5 m; Home Assistant wants an
		// accuracy to place a GPS tracker in its zones.
		attrs["gps_accuracy"] = 1
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	return errors.Join(
		d.brk.Publish(base+"/attributes", b, true),
		d.brk.Publish(base+"/state", []byte(st.state), true))
}

// maxObjectID bounds an object id so that the entity id Home Assistant
// derives from it ("device_tracker.<node>_<object id>") stays within its
// 255 characters for a node id of up to 40.
const maxObjectID = 200

// objectID is a device or fence id as Home Assistant's object ids allow
// ([a-zA-Z0-9_-]), escaped so that two ids never share one: an id's entity
// can be nobody else's. kind_<escaped id>, or, when that is longer than
// maxObjectID, kindh_<128-bit hash of the id> (which no escaped form
// spells: it has h where the other has _).
func objectID(kind, id string) string {
	b := make([]byte, 0, len(kind)+1+len(id))
	b = append(b, kind...)
	b = append(b, '_')
	b = escape(b, id)
	if len(b) <= maxObjectID {
		return string(b)
	}
	sum := sha256.Sum256([]byte(id))
	return kind + "h_" + hex.EncodeToString(sum[:16])
}

// escape appends id with every byte outside [a-zA-Z0-9-] written as _XX
// (hex) and '_' as __: reversible, so injective, and ids of letters,
// digits and '-' (most ids) read as themselves.
func escape(b []byte, id string) []byte {
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b = append(b, c)
		case c == '_':
			b = append(b, '_', '_')
		default:
			b = append(b, '_', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return b
}

func (d *Discovery) trackerTopic(id string) string {
	return d.cfg.Prefix + "/device_tracker/" + d.cfg.Node + "/" + objectID("device", id) + "/config"
}

func (d *Discovery) sensorTopic(id string) string {
	return d.cfg.Prefix + "/sensor/" + d.cfg.Node + "/" + objectID("fence", id) + "/config"
}

// The state topics carry the ids as topic levels: they are valid ones
// (the ingest path and the fence loader check).
func (d *Discovery) deviceBase(id string) string { return d.cfg.Base + "/device/" + id }
func (d *Discovery) fenceBase(id string) string  { return d.cfg.Base + "/fence/" + id }

// origin names the software that publishes the discovery messages.
func (d *Discovery) origin() map[string]any {
	o := map[string]any{"name": "edgefence", "support_url": "https://github.com/edgefence/edgefence"}
	if d.cfg.Version != "" {
		o["sw_version"] = d.cfg.Version
	}
	return o
}

func (d *Discovery) trackerConfig(id string) map[string]any {
	obj := objectID("device", id)
	return map[string]any{
		"name":                  nil, // the entity is the device's main feature: it takes the device's name
		"unique_id":             d.cfg.Node + "_" + obj,
		"default_entity_id":     "device_tracker." + d.cfg.Node + "_" + strings.ToLower(obj),
		"state_topic":           d.deviceBase(id) + "/state",
		"json_attributes_topic": d.deviceBase(id) + "/attributes",
		"payload_home":          "home",
		"payload_not_home":      "not_home",
		"source_type":           "gps",
		"availability_topic":    d.availability(),
		"payload_available":     "online",
		"payload_not_available": "offline",
		"qos":                   1,
		"device": map[string]any{
			"identifiers":  []string{d.cfg.Node + "_" + obj},
			"name":         id,
			"manufacturer": "edgefence",
			"model":        "GPS tracker",
			"via_device":   d.cfg.Node,
		},
		"origin": d.origin(),
	}
}

func (d *Discovery) sensorConfig(f *fence.Fence) map[string]any {
	obj := objectID("fence", f.ID)
	name := f.Name
	if name == "" {
		name = f.ID
	}
	return map[string]any{
		"name":                  name + " occupancy",
		"unique_id":             d.cfg.Node + "_" + obj,
		"default_entity_id":     "sensor." + d.cfg.Node + "_" + strings.ToLower(obj),
		"state_topic":           d.fenceBase(f.ID) + "/state",
		"unit_of_measurement":   "devices",
		"state_class":           "measurement",
		"icon":                  "mdi:map-marker-radius",
		"availability_topic":    d.availability(),
		"payload_available":     "online",
		"payload_not_available": "offline",
		"qos":                   1,
		"device": map[string]any{
			"identifiers":  []string{d.cfg.Node},
			"name":         "edgefence",
			"manufacturer": "edgefence",
			"model":        "geofence broker",
		},
		"origin": d.origin(),
	}
}
