// Package homeassistant announces edgefence's devices and fences to Home
// Assistant by MQTT discovery: each device, once the engine decided where
// it is (a ping evaluated, or its state restored), as a device_tracker (the name of its current fence as
// state, its position and accuracy as attributes) with a binary_sensor
// per fence (inside or not); each fence as a sensor of its occupancy.
// Entities are removed when a device is evicted or a fence removed, and
// their availability follows the server (docs/dashboard.md). It reads
// the engine's state every interval and publishes what changed, retained.
package homeassistant

import (
	"fmt"
	"log/slog"
	"slices"
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

// kinds are the entity domains announced.
var kinds = []string{"device_tracker", "sensor", "binary_sensor"}

// Discovery keeps Home Assistant's entities in step with the engine.
type Discovery struct {
	cfg Config
	eng Engine
	brk Broker

	devices map[string]deviceState // what was published, by device id
	fences  map[string]fenceState  // what was published, by fence id
	known   map[string]bool        // config topics this run retained
	stale   map[string]bool        // config topics a previous run retained, until the first update

	stop, done chan struct{}
	once       sync.Once
}

// deviceState is what was published of a device.
type deviceState struct {
	state    string // the name of its fence, or not_home
	lat, lon float64
	acc      float32
	has      bool
	inside   []string // fence ids, as the engine lists them
}

func (a *deviceState) same(b *deviceState, inside []string) bool {
	return a.state == b.state && a.lat == b.lat && a.lon == b.lon && a.acc == b.acc && a.has == b.has &&
		slices.Equal(a.inside, inside)
}

// fenceState is what was published of a fence.
type fenceState struct {
	name string
	n    int // devices inside
}

// Start announces the server as available, picks up the entities a
// previous run announced (to remove those no longer there) and starts
// the updates.
func Start(cfg Config, eng Engine, brk Broker) (*Discovery, error) {
	cfg = cfg.filled()
	d := &Discovery{cfg: cfg, eng: eng, brk: brk,
		devices: map[string]deviceState{}, fences: map[string]fenceState{},
		known: map[string]bool{}, stale: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, kind := range kinds {
		for _, t := range brk.Retained(cfg.Prefix + "/" + kind + "/" + cfg.Node + "/+/config") {
			d.stale[t] = true
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
	out := make([]string, 0, len(kinds)+1)
	for _, k := range kinds {
		out = append(out, f.Prefix+"/"+k+"/"+f.Node+"/#")
	}
	return append(out, f.Base+"/#")
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
