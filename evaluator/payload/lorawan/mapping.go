package lorawan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// Path is a field in the decoded object, as keys from its top level down:
// "gps.lat" is Path{"gps", "lat"}.
type Path []string

// String returns the path as written: keys joined with dots.
func (p Path) String() string { return strings.Join(p, ".") }

// Mapping says where a codec puts what the common layouts do not cover.
// The zero Mapping recognises the common layouts (see Layouts) and takes
// the format's default device id.
type Mapping struct {
	// Lat and Lon locate the position in the decoded object; both or
	// neither. When set, Acc and Ts are read only from their own paths.
	Lat, Lon Path
	// Acc locates the accuracy radius in metres.
	Acc Path
	// Ts locates the device's own stamp: epoch seconds or milliseconds
	// (a number below 1e11 is seconds), or an RFC 3339 string.
	Ts Path
	// NoTs ignores any device stamp in the decoded object (ts=none): for a
	// codec whose "time" means something else.
	NoTs bool
	// ID names the field the device id comes from: "devEui" (the
	// default) or "deviceName" for ChirpStack, "device_id" (the default)
	// or "dev_eui" for The Things Stack.
	ID string
}

// ErrMapping is wrapped by every error Set returns.
var ErrMapping = errors.New("field mapping")

// Set applies one key=value setting, as written after a telemetry
// filter's format: lat, lon, acc and ts take a dotted path in the decoded
// object (ts also "none"), id a device id field of format f.
func (m *Mapping) Set(f payload.Format, kv string) error {
	key, value, ok := strings.Cut(kv, "=")
	if !ok || value == "" {
		return fmt.Errorf("%w: %q is not key=value", ErrMapping, kv)
	}
	var path Path
	if key != "id" && !(key == "ts" && value == "none") {
		path = strings.Split(value, ".")
		for _, k := range path {
			if k == "" {
				return fmt.Errorf("%w: %s=%s has an empty key", ErrMapping, key, value)
			}
		}
	}
	switch key {
	case "lat":
		m.Lat = path
	case "lon", "lng":
		m.Lon = path
	case "acc":
		m.Acc = path
	case "ts":
		m.Ts, m.NoTs = path, path == nil
	case "id":
		ids := map[payload.Format][]string{payload.ChirpStack: {"devEui", "deviceName"}, payload.TTN: {"device_id", "dev_eui"}}[f]
		if !slices.Contains(ids, value) {
			return fmt.Errorf("%w: id=%s: %s uplinks take the device id from %s", ErrMapping, value, f, strings.Join(ids, " or "))
		}
		m.ID = value
	default:
		return fmt.Errorf("%w: unknown key %q (want lat, lon, acc, ts or id)", ErrMapping, key)
	}
	return nil
}

// Check reports a mapping that cannot work: lat without lon or the other
// way round.
func (m *Mapping) Check() error {
	if (m.Lat == nil) != (m.Lon == nil) {
		return fmt.Errorf("%w: lat and lon are mapped together or not at all", ErrMapping)
	}
	return nil
}

// String returns the mapping as Set reads it, comma-separated; "" for
// the zero Mapping.
func (m *Mapping) String() string {
	var parts []string
	for _, kv := range []struct {
		k string
		p Path
	}{{"lat", m.Lat}, {"lon", m.Lon}, {"acc", m.Acc}, {"ts", m.Ts}} {
		if kv.p != nil {
			parts = append(parts, kv.k+"="+kv.p.String())
		}
	}
	if m.NoTs {
		parts = append(parts, "ts=none")
	}
	if m.ID != "" {
		parts = append(parts, "id="+m.ID)
	}
	return strings.Join(parts, ",")
}
