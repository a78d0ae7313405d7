package homeassistant

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

// changed is a device whose published state is to change.
type changed struct {
	id    string
	st    deviceState
	first bool // not announced yet
}

// update publishes what changed since the last one.
func (d *Discovery) update() {
	set := d.eng.Fences()
	var errs []error
	// Fences gone from the set: their sensor and every device's occupancy.
	for id := range d.fences {
		if set.ByID(id) == nil {
			errs = append(errs, d.remove(d.sensorTopic(id)), d.brk.Publish(d.fenceBase(id)+"/state", nil, true))
			for dev := range d.devices {
				errs = append(errs, d.removeOccupancy(dev, id))
			}
			delete(d.fences, id)
		}
	}
	// Read the engine, copying out only what changed: the visit runs in
	// the shards' goroutines, which publishing must not hold up.
	seen := make(map[string]bool, len(d.devices))
	occupancy := map[string]int{}
	var diff []changed
	err := d.eng.Fleet(func(s *inspect.DeviceSummary) {
		if !s.Decided {
			// Nothing evaluated yet (its first pings wait in the reorder
			// buffer): announced now, it would read not_home, and Home
			// Assistant would see it leave a zone it may be in. (A device
			// whose state a restart restored is decided.)
			return
		}
		seen[s.Device] = true
		for _, f := range s.Inside {
			occupancy[f]++
		}
		st := deviceState{state: "not_home", lat: s.Lat, lon: s.Lon, acc: s.Acc, has: s.HasPosition}
		if len(s.Inside) > 0 {
			st.state = s.Inside[0] // one of them, the same each time
			if f := set.ByID(s.Inside[0]); f != nil {
				st.state = fenceName(f)
			}
		}
		old, ok := d.devices[s.Device]
		if ok && old.same(&st, s.Inside) {
			return
		}
		st.inside = slices.Clone(s.Inside)
		diff = append(diff, changed{id: s.Device, st: st, first: !ok})
	})
	if err != nil {
		return // shutting down
	}
	for id := range d.devices {
		if !seen[id] { // evicted: the engine forgot it
			errs = append(errs, d.removeDevice(id))
		}
	}
	// Fences new or renamed: every announced device's occupancy of them
	// (a device announced now gets all of them below).
	for _, f := range set.Fences() {
		if old, ok := d.fences[f.ID]; ok && old.name == fenceName(f) {
			continue
		}
		for id, st := range d.devices {
			errs = append(errs, d.publishOccupancy(id, f, slices.Contains(st.inside, f.ID), true))
		}
	}
	for i := range diff {
		if err := d.publishDevice(&diff[i], set); err != nil {
			errs = append(errs, err)
			continue
		}
		d.devices[diff[i].id] = diff[i].st
	}
	for _, f := range set.Fences() {
		old, ok := d.fences[f.ID]
		name := fenceName(f)
		if !ok || old.name != name {
			if err := d.publishConfig(d.sensorTopic(f.ID), d.sensorConfig(f)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if !ok || old.n != occupancy[f.ID] {
			errs = append(errs, d.brk.Publish(d.fenceBase(f.ID)+"/state", fmt.Append(nil, occupancy[f.ID]), true))
		}
		d.fences[f.ID] = fenceState{name: name, n: occupancy[f.ID]}
	}
	// Entities of a previous run that are no longer there.
	for t := range d.stale {
		if !d.known[t] {
			errs = append(errs, d.remove(t))
		}
	}
	clear(d.stale)
	if err := errors.Join(errs...); err != nil {
		d.cfg.Log.Warn("home assistant discovery: publish failed", "error", err)
	}
}

// publishDevice announces a device (its tracker and its occupancy of
// every fence) or publishes what changed of it.
func (d *Discovery) publishDevice(c *changed, set *fence.Set) error {
	base := d.deviceBase(c.id)
	var errs []error
	if c.first {
		if err := d.publishConfig(d.trackerTopic(c.id), d.trackerConfig(c.id)); err != nil {
			return err
		}
		for _, f := range set.Fences() {
			errs = append(errs, d.publishOccupancy(c.id, f, slices.Contains(c.st.inside, f.ID), true))
		}
	} else {
		// Only the fences it entered or left.
		old := d.devices[c.id].inside
		for _, f := range set.Fences() {
			if was, is := slices.Contains(old, f.ID), slices.Contains(c.st.inside, f.ID); was != is {
				errs = append(errs, d.publishOccupancy(c.id, f, is, false))
			}
		}
	}
	attrs := map[string]any{"fences_inside": len(c.st.inside)}
	if c.st.has {
		attrs["latitude"], attrs["longitude"] = c.st.lat, c.st.lon
		if c.st.acc > 0 {
			// The ping's, to the decimetre: a float32 prints as 12.3, not 12.300000190734863.
			attrs["gps_accuracy"] = c.st.acc
		}
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	errs = append(errs,
		d.brk.Publish(base+"/attributes", b, true),
		d.brk.Publish(base+"/state", []byte(c.st.state), true))
	return errors.Join(errs...)
}

// publishOccupancy publishes whether device id is inside f, with its
// binary_sensor's config first when announce.
func (d *Discovery) publishOccupancy(id string, f *fence.Fence, inside, announce bool) error {
	if announce {
		if err := d.publishConfig(d.occupancyTopic(id, f.ID), d.occupancyConfig(id, f)); err != nil {
			return err
		}
	}
	state := "OFF"
	if inside {
		state = "ON"
	}
	return d.brk.Publish(d.occupancyState(id, f.ID), []byte(state), true)
}

// removeOccupancy deletes device id's binary_sensor of fence, if announced.
func (d *Discovery) removeOccupancy(id, fence string) error {
	t := d.occupancyTopic(id, fence)
	if !d.known[t] {
		return nil
	}
	return errors.Join(d.remove(t), d.brk.Publish(d.occupancyState(id, fence), nil, true))
}

// removeDevice deletes an evicted device's entities and retained states.
func (d *Discovery) removeDevice(id string) error {
	base := d.deviceBase(id)
	errs := []error{d.remove(d.trackerTopic(id)),
		d.brk.Publish(base+"/state", nil, true), d.brk.Publish(base+"/attributes", nil, true)}
	for f := range d.fences {
		errs = append(errs, d.removeOccupancy(id, f))
	}
	delete(d.devices, id)
	return errors.Join(errs...)
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
