package homeassistant

import (
	"strings"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// The discovery payloads, in the long option names of Home Assistant's
// MQTT integration (device_tracker.mqtt, sensor.mqtt, binary_sensor.mqtt
// and the discovery page for device and origin). Every entity has a
// unique_id, a device and the server's availability.

// origin names the software that publishes the discovery messages.
func (d *Discovery) origin() map[string]any {
	o := map[string]any{"name": "edgefence", "support_url": "https://github.com/edgefence/edgefence"}
	if d.cfg.Version != "" {
		o["sw_version"] = d.cfg.Version
	}
	return o
}

// entity is the options every entity shares: its ids, the server's
// availability and the origin.
func (d *Discovery) entity(domain, obj string, dev map[string]any) map[string]any {
	return map[string]any{
		"unique_id":             d.cfg.Node + "_" + obj,
		"default_entity_id":     domain + "." + d.cfg.Node + "_" + strings.ToLower(obj),
		"availability_topic":    d.availability(),
		"payload_available":     "online",
		"payload_not_available": "offline",
		"qos":                   1,
		"device":                dev,
		"origin":                d.origin(),
	}
}

// trackerDevice is the HA device of a tracker: its device_tracker and its
// occupancy binary_sensors.
func (d *Discovery) trackerDevice(id string) map[string]any {
	return map[string]any{
		"identifiers":  []string{d.cfg.Node + "_" + objectID("device", id)},
		"name":         id,
		"manufacturer": "edgefence",
		"model":        "GPS tracker",
		"via_device":   d.cfg.Node,
	}
}

func (d *Discovery) trackerConfig(id string) map[string]any {
	c := d.entity("device_tracker", objectID("device", id), d.trackerDevice(id))
	c["name"] = nil // the entity is the device's main feature: it takes the device's name
	c["state_topic"] = d.deviceBase(id) + "/state"
	c["json_attributes_topic"] = d.deviceBase(id) + "/attributes"
	c["payload_home"] = "home"
	c["payload_not_home"] = "not_home"
	c["source_type"] = "gps"
	return c
}

// fenceName is what Home Assistant shows for a fence: its name, else its id.
func fenceName(f *fence.Fence) string {
	if f.Name != "" {
		return f.Name
	}
	return f.ID
}

func (d *Discovery) sensorConfig(f *fence.Fence) map[string]any {
	c := d.entity("sensor", objectID("fence", f.ID), map[string]any{
		"identifiers":  []string{d.cfg.Node},
		"name":         "edgefence",
		"manufacturer": "edgefence",
		"model":        "geofence broker",
	})
	c["name"] = fenceName(f) + " occupancy"
	c["state_topic"] = d.fenceBase(f.ID) + "/state"
	c["unit_of_measurement"] = "devices"
	c["state_class"] = "measurement"
	c["icon"] = "mdi:map-marker-radius"
	return c
}

// occupancyConfig is the binary_sensor of device id inside fence f, on
// the device's HA device: "<device> <fence name>", on while it is inside.
func (d *Discovery) occupancyConfig(id string, f *fence.Fence) map[string]any {
	c := d.entity("binary_sensor", pairID(id, f.ID), d.trackerDevice(id))
	c["name"] = fenceName(f)
	c["state_topic"] = d.occupancyState(id, f.ID)
	c["payload_on"] = "ON"
	c["payload_off"] = "OFF"
	c["device_class"] = "occupancy"
	return c
}
