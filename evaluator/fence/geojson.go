package fence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// maxIDLen bounds ids because they become MQTT topic levels.
const maxIDLen = 128

// object is a JSON object decoded with exact (case-sensitive) keys, unlike
// encoding/json struct decoding, which would accept "ID" or "Type".
type object map[string]json.RawMessage

// get returns the member, treating JSON null like an absent member.
func (o object) get(key string) (json.RawMessage, bool) {
	raw, ok := o[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return nil, false
	}
	return raw, true
}

func decodeObject(raw json.RawMessage) (object, bool) {
	var o object
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return nil, false
	}
	return o, true
}

func decodeString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isString(raw json.RawMessage, want string) bool {
	s, ok := decodeString(raw)
	return ok && s == want
}

func decodeNumber(raw json.RawMessage) (float64, bool) {
	var n float64
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}

// decodeFeatures checks the FeatureCollection envelope and returns the raw
// features so each can be reported by index.
func decodeFeatures(data []byte) ([]json.RawMessage, error) {
	var top object
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFeatureCollection, err)
	}
	if raw, _ := top.get("type"); !isString(raw, "FeatureCollection") {
		return nil, fmt.Errorf(`%w: "type" must be "FeatureCollection"`, ErrNotFeatureCollection)
	}
	var features []json.RawMessage
	raw, ok := top.get("features")
	if !ok || raw[0] != '[' || json.Unmarshal(raw, &features) != nil {
		return nil, fmt.Errorf(`%w: "features" must be an array`, ErrNotFeatureCollection)
	}
	return features, nil
}

// parseFeature decodes and validates one feature. On error the returned id is
// whatever could be determined, for the FeatureError.
func parseFeature(raw json.RawMessage) (*Fence, string, error) {
	obj, ok := decodeObject(raw)
	if !ok {
		return nil, "", errf(ErrInvalidFeature, "feature is not a JSON object")
	}
	props := object{}
	if raw, ok := obj.get("properties"); ok {
		if props, ok = decodeObject(raw); !ok {
			id, _ := featureID(obj, object{}) // best effort, for the message
			return nil, id, errf(ErrInvalidFeature, "properties is not a JSON object")
		}
	}
	id, err := featureID(obj, props)
	if err != nil {
		return nil, id, err
	}
	f := &Fence{ID: id}
	if raw, _ := obj.get("type"); !isString(raw, "Feature") {
		return nil, id, errf(ErrInvalidFeature, `"type" must be "Feature"`)
	}
	if raw, ok := props.get("name"); ok {
		if f.Name, ok = decodeString(raw); !ok {
			return nil, id, errf(ErrInvalidFeature, "properties.name must be a string")
		}
	}
	if raw, ok := props.get("dwell"); ok {
		d, ok := decodeNumber(raw)
		// The bound keeps the conversion to nanoseconds from overflowing.
		if !ok || d < 0 || d > float64(math.MaxInt64/int64(time.Second)) {
			return nil, id, errf(ErrInvalidDwell, "properties.dwell must be a number of seconds >= 0, got %s", clip(raw))
		}
		f.Dwell, f.HasDwell = time.Duration(math.Round(d*float64(time.Second))), true
	}
	if raw, ok := props.get("max_accuracy"); ok {
		m, ok := decodeNumber(raw)
		if !ok || !(m >= 0) || math.IsInf(m, 0) {
			return nil, id, errf(ErrInvalidAccuracy, "properties.max_accuracy must be a number of metres >= 0, got %s", clip(raw))
		}
		f.MaxAccuracy, f.HasMaxAccuracy = m, true
	}
	if raw, ok := props.get("accuracy_margin"); ok {
		m, ok := decodeNumber(raw)
		if !ok || !(m >= 0) || m > MaxMargin {
			return nil, id, errf(ErrInvalidMargin, "properties.accuracy_margin must be a number >= 0 and at most %d (times a fix's accuracy), got %s", MaxMargin, clip(raw))
		}
		f.Margin, f.HasMargin = m, true
	}
	if raw, ok := props.get("confirm"); ok {
		switch string(bytes.TrimSpace(raw)) {
		case "true":
		case "false":
			f.Single = true
		default:
			return nil, id, errf(ErrInvalidConfirm, "properties.confirm must be true or false, got %s", clip(raw))
		}
	}
	radius := 0.0
	if raw, ok := props.get("radius"); ok {
		if radius, ok = decodeNumber(raw); !ok || !(radius > 0) || math.IsInf(radius, 0) {
			return nil, id, errf(ErrInvalidRadius, "properties.radius must be a number of metres > 0, got %s", clip(raw))
		}
		if radius > MaxRadius {
			return nil, id, errf(ErrInvalidRadius, "properties.radius must be at most %d metres (20000 km: half the Earth's circumference), got %s", MaxRadius, clip(raw))
		}
	}
	if err := parseGeometry(f, obj, radius); err != nil {
		return nil, id, err
	}
	f.depth = f.estimateDepth()
	return f, id, nil
}

// featureID prefers the top-level id (string or number, numbers kept as
// written) and falls back to properties.id (string).
func featureID(obj, props object) (string, error) {
	var top, prop string
	raw, hasTop := obj.get("id")
	if hasTop {
		var ok bool
		if top, ok = decodeString(raw); !ok {
			if _, ok = decodeNumber(raw); !ok {
				return "", errf(ErrInvalidID, "id must be a string or number, got %s", clip(raw))
			}
			top = string(raw)
		}
	}
	raw, hasProp := props.get("id")
	if hasProp {
		var ok bool
		if prop, ok = decodeString(raw); !ok {
			return top, errf(ErrInvalidID, "properties.id must be a string, got %s", clip(raw))
		}
	}
	id := top
	switch {
	case hasTop && hasProp && top != prop:
		return top, errf(ErrInvalidID, "id %q and properties.id %q differ", top, prop)
	case !hasTop && !hasProp:
		return "", errf(ErrMissingID, `feature has no "id" or properties.id`)
	case !hasTop:
		id = prop
	}
	if reason := invalidID(id); reason != "" {
		return id, errf(ErrInvalidID, "id %s", reason)
	}
	return id, nil
}

// invalidID explains why id cannot be a single MQTT topic level ("" if it
// can): fence ids are published as a topic level, so wildcards, separators
// and the reserved '$' prefix would corrupt or hide the topic.
func invalidID(id string) string {
	switch {
	case id == "":
		return "is empty"
	case len(id) > maxIDLen:
		return fmt.Sprintf("is %d bytes, at most %d allowed", len(id), maxIDLen)
	case !utf8.ValidString(id):
		return "is not valid UTF-8"
	case strings.ContainsAny(id, "/+#\x00"):
		return `must not contain '/', '+', '#' or NUL`
	case id[0] == '$':
		return "must not start with '$'"
	}
	return ""
}

// parseGeometry fills f's shape and bounding box.
func parseGeometry(f *Fence, obj object, radius float64) error {
	raw, ok := obj.get("geometry")
	if !ok {
		return errf(ErrUnsupportedGeometry, "feature has no geometry")
	}
	geom, ok := decodeObject(raw)
	if !ok {
		return errf(ErrUnsupportedGeometry, "geometry is not a JSON object")
	}
	raw, _ = geom.get("type")
	typ, _ := decodeString(raw)
	switch typ {
	case "Point", "Polygon", "MultiPolygon":
	default:
		if raw == nil {
			return errf(ErrUnsupportedGeometry, "geometry has no type")
		}
		return errf(ErrUnsupportedGeometry, "geometry type %s is not supported (want Polygon, MultiPolygon, or Point with properties.radius)", clip(raw))
	}
	if radius != 0 && typ != "Point" {
		return errf(ErrInvalidRadius, "properties.radius is only allowed with Point geometry, not %s", typ)
	}
	if radius == 0 && typ == "Point" {
		return errf(ErrUnsupportedGeometry, "Point geometry needs properties.radius (metres) to be a circle fence")
	}
	coords, ok := geom.get("coordinates")
	if !ok {
		return errf(ErrInvalidCoordinates, "%s has no coordinates", typ)
	}
	// encoding/json silently decodes null into float64 as 0; refuse it up
	// front rather than invent a position at (0, 0).
	if bytes.Contains(coords, []byte("null")) {
		return errf(ErrInvalidCoordinates, "coordinates contain null")
	}
	switch typ {
	case "Point":
		var pos []float64
		if err := json.Unmarshal(coords, &pos); err != nil {
			return errf(ErrInvalidCoordinates, "point coordinates: %w", err)
		}
		lon, lat, problem := position(pos)
		if problem != "" {
			return errf(ErrInvalidCoordinates, "point %s", problem)
		}
		f.isCircle, f.circle = true, newCircle(lat, lon, radius)
		f.min, f.max = circleBounds(lat, lon, radius)
		return nil
	case "Polygon":
		var rings [][][]float64
		if err := json.Unmarshal(coords, &rings); err != nil {
			return errf(ErrInvalidCoordinates, "polygon coordinates: %w", err)
		}
		return addPolygon(f, rings, "polygon")
	case "MultiPolygon":
		var polys [][][][]float64
		if err := json.Unmarshal(coords, &polys); err != nil {
			return errf(ErrInvalidCoordinates, "multipolygon coordinates: %w", err)
		}
		if len(polys) == 0 {
			return errf(ErrInvalidRing, "multipolygon has no polygons")
		}
		for i, rings := range polys {
			if err := addPolygon(f, rings, fmt.Sprintf("polygon %d", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// addPolygon validates rings and appends them to f's flat geometry. Unclosed
// rings are rejected, not silently closed (RFC 7946 requires closure): a
// missing closing position more often means a truncated or mangled file.
func addPolygon(f *Fence, rings [][][]float64, where string) error {
	if len(rings) == 0 {
		return errf(ErrInvalidRing, "%s has no rings", where)
	}
	if len(f.rings) == 0 {
		f.min = [2]float64{math.Inf(1), math.Inf(1)}
		f.max = [2]float64{math.Inf(-1), math.Inf(-1)}
	}
	for i, positions := range rings {
		if len(positions) < 4 {
			return errf(ErrInvalidRing, "%s ring %d has %d positions, need at least 4", where, i, len(positions))
		}
		r := ring{
			hole: i > 0,
			min:  [2]float64{math.Inf(1), math.Inf(1)},
			max:  [2]float64{math.Inf(-1), math.Inf(-1)},
		}
		start := len(f.coords)
		for j, pos := range positions {
			lon, lat, problem := position(pos)
			if problem != "" {
				return errf(ErrInvalidCoordinates, "%s ring %d position %d %s", where, i, j, problem)
			}
			f.coords = append(f.coords, lon, lat)
			r.min = [2]float64{math.Min(r.min[0], lon), math.Min(r.min[1], lat)}
			r.max = [2]float64{math.Max(r.max[0], lon), math.Max(r.max[1], lat)}
		}
		if c := f.coords; c[start] != c[len(c)-2] || c[start+1] != c[len(c)-1] {
			return errf(ErrInvalidRing, "%s ring %d is not closed (first and last positions differ)", where, i)
		}
		r.end = len(f.coords)
		f.rings = append(f.rings, r)
		f.min = [2]float64{math.Min(f.min[0], r.min[0]), math.Min(f.min[1], r.min[1])}
		f.max = [2]float64{math.Max(f.max[0], r.max[0]), math.Max(f.max[1], r.max[1])}
	}
	return nil
}

// position validates a GeoJSON [lon, lat, ...] position (altitude ignored)
// and otherwise says what is wrong with it.
func position(pos []float64) (lon, lat float64, problem string) {
	if len(pos) < 2 {
		return 0, 0, fmt.Sprintf("has %d numbers, need [lon, lat]", len(pos))
	}
	lon, lat = pos[0], pos[1]
	// JSON cannot encode NaN or Inf, but the negated tests keep that local.
	if !(lat >= -90 && lat <= 90) {
		return 0, 0, fmt.Sprintf("has latitude %g, outside [-90, 90] (GeoJSON order is [lon, lat])", lat)
	}
	if !(lon >= -180 && lon <= 180) {
		return 0, 0, fmt.Sprintf("has longitude %g, outside [-180, 180]", lon)
	}
	return lon, lat, ""
}

// clip shortens raw JSON for error messages.
func clip(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	if len(raw) > 40 {
		return strings.ToValidUTF8(string(raw[:37]), "") + "..."
	}
	return string(raw)
}
