package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
)

// MaxDeviceID is the longest device id accepted, in bytes.
const MaxDeviceID = engine.MaxDeviceID

// TelemetryFilter is one topic filter trackers publish on, and how its
// payloads are read. The filter's single-level wildcards ('+') carry the
// device id: one wildcard is the id itself; several are joined with '-', so
// OwnTracks' owntracks/<user>/<device> becomes "<user>-<device>".
//
// A filter may be an MQTT 5 shared subscription, $share/<group>/<filter>:
// what a bridge subscribes to so that several bridges split the telemetry.
// Topics are matched against <filter>; to an embedded broker, which
// subscribes to nothing, the prefix means nothing.
type TelemetryFilter struct {
	Filter string // as given: what a bridge subscribes to
	Share  string // the shared-subscription group, or ""
	Format payload.Format
	// Mapping says where a LoRaWAN codec puts the position (Format
	// chirpstack or ttn only); the device id then comes from the uplink,
	// not the topic.
	Mapping lorawan.Mapping
	levels  []string // of the filter without $share/<group>/
}

// DefaultTelemetryFilters are the filters served when none are configured:
// the canonical and OwnTracks topics, and the uplinks of the LoRaWAN
// network servers (ChirpStack v4, The Things Stack v3), the same for
// serve, bridge and worker.
var DefaultTelemetryFilters = []string{"devices/+/telemetry", "owntracks/+/+",
	"application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn"}

// ParseTelemetryFilters parses each filter of list (see ParseTelemetryFilter).
// An entry that is only a field mapping setting (lat=gps.lat) continues
// the entry before it, as an environment variable's comma-separated list
// splits a filter from its mapping.
func ParseTelemetryFilters(list []string) ([]TelemetryFilter, error) {
	var joined []string
	for _, s := range list {
		if k, _, ok := strings.Cut(s, "="); ok && len(joined) > 0 && slices.Contains(mappingKeys, k) {
			joined[len(joined)-1] += "," + s
			continue
		}
		joined = append(joined, s)
	}
	out := make([]TelemetryFilter, 0, len(joined))
	for _, s := range joined {
		tf, err := ParseTelemetryFilter(s)
		if err != nil {
			return nil, err
		}
		out = append(out, tf)
	}
	return out, nil
}

// mappingKeys are the keys of lorawan.Mapping.Set.
var mappingKeys = []string{"lat", "lon", "lng", "acc", "ts", "id"}

// DefaultFilters parses DefaultTelemetryFilters.
func DefaultFilters() []TelemetryFilter {
	tf, err := ParseTelemetryFilters(DefaultTelemetryFilters)
	if err != nil {
		panic(err) // the defaults are constants
	}
	return tf
}

// ParseTelemetryFilter reads "filter" or "filter=format" (format: auto,
// canonical, owntracks, chirpstack or ttn; default auto, recognised from
// the payload), a LoRaWAN format optionally followed by a field mapping,
// "filter=chirpstack,lat=gps.lat,lon=gps.lng" (see lorawan.Mapping.Set).
// The filter may start with $share/<group>/.
func ParseTelemetryFilter(s string) (TelemetryFilter, error) {
	filter, format, hasFormat := strings.Cut(s, "=")
	tf := TelemetryFilter{Filter: filter, Format: payload.Auto}
	if hasFormat {
		format, mapping, hasMapping := strings.Cut(format, ",")
		f, err := payload.ParseFormat(format)
		if err != nil {
			return tf, fmt.Errorf("telemetry topic %q: %w", s, err)
		}
		tf.Format = f
		if hasMapping {
			if !f.LoRaWAN() {
				return tf, fmt.Errorf("telemetry topic %q: a field mapping needs format chirpstack or ttn", s)
			}
			for _, kv := range strings.Split(mapping, ",") {
				if err := tf.Mapping.Set(f, kv); err != nil {
					return tf, fmt.Errorf("telemetry topic %q: %w", s, err)
				}
			}
			if err := tf.Mapping.Check(); err != nil {
				return tf, fmt.Errorf("telemetry topic %q: %w", s, err)
			}
		}
	}
	if rest, shared := strings.CutPrefix(filter, "$share/"); shared {
		group, f, ok := strings.Cut(rest, "/")
		if !ok || group == "" || f == "" || strings.ContainsAny(group, "+#") {
			return tf, fmt.Errorf("telemetry topic %q: a shared subscription is $share/<group>/<filter>, the group a non-empty name without wildcards", s)
		}
		tf.Share, filter = group, f
	}
	tf.levels = strings.Split(filter, "/")
	wild := 0
	for _, l := range tf.levels {
		switch {
		case l == "+":
			wild++
		case l == "#" || strings.ContainsAny(l, "+#"):
			return tf, fmt.Errorf("telemetry topic %q: only whole-level '+' wildcards are allowed", s)
		}
	}
	if wild == 0 {
		return tf, fmt.Errorf("telemetry topic %q: needs a '+' level for the device id", s)
	}
	return tf, nil
}

// ErrDeviceID is returned for a telemetry topic whose device id is empty
// or longer than MaxDeviceID.
var ErrDeviceID = errors.New("device id level empty or too long")

// ErrDeviceMismatch is why a publish whose body names a device other than
// its topic's is refused: the topic's device is the device, the one the
// access rules and rate limits were checked for.
var ErrDeviceMismatch = errors.New("the body names a device other than the topic's")

// BodyNamed reports whether the filter's mapping takes the device id from
// a field of the uplink that its topic does not name (ChirpStack's
// deviceName, The Things Stack's dev_eui): the body then names the device,
// so only roles that may publish for any device may publish on it.
func (tf *TelemetryFilter) BodyNamed() bool {
	switch tf.Format {
	case payload.ChirpStack:
		return tf.Mapping.ID == "deviceName"
	case payload.TTN:
		return tf.Mapping.ID == "dev_eui"
	}
	return false
}

// deviceLevel returns the topic's level under the filter's last '+', where
// network servers put the device (application/+/device/+/event/up,
// v3/+/devices/+/up); topic matches the filter.
func (tf *TelemetryFilter) deviceLevel(topic string) string {
	last := 0
	for i, l := range tf.levels {
		if l == "+" {
			last = i
		}
	}
	for range last {
		_, topic, _ = strings.Cut(topic, "/")
	}
	level, _, _ := strings.Cut(topic, "/")
	return level
}

// Match reports whether topic matches the filter (without any $share
// prefix) and returns the device id; err is ErrDeviceID when the id is
// empty or too long, with ok true. For a LoRaWAN filter this is the
// topic's id (what rate limits and access rules key on); the ping's
// device is the one its uplink names.
func (tf *TelemetryFilter) Match(topic string) (id string, ok bool, err error) {
	return tf.match(topic, true)
}

// match is Match; without needID it skips making the id, which a
// LoRaWAN uplink names itself. A single-wildcard id is a substring of
// topic: no allocation.
func (tf *TelemetryFilter) match(topic string, needID bool) (id string, ok bool, err error) {
	rest := topic
	var parts [4]string
	n := 0
	for i, l := range tf.levels {
		level, tail, more := strings.Cut(rest, "/")
		if more != (i < len(tf.levels)-1) {
			return "", false, nil
		}
		rest = tail
		if l != "+" {
			if level != l {
				return "", false, nil
			}
			continue
		}
		if n < len(parts) {
			parts[n] = level
		}
		n++
	}
	if !needID {
		return "", true, nil
	}
	switch n {
	case 1:
		id = parts[0]
	default:
		id = strings.Join(parts[:min(n, len(parts))], "-")
	}
	if id == "" || len(id) > MaxDeviceID || n > len(parts) {
		return id, true, ErrDeviceID
	}
	for _, p := range parts[:n] {
		if p == "" {
			return id, true, ErrDeviceID
		}
	}
	return id, true, nil
}
