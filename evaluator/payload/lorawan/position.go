package lorawan

import (
	"math"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// The keys of the common layouts of a decoded object, as one table so a
// level is walked once.
const (
	kLatitude = iota
	kLongitude
	kLat
	kLon
	kLng
	kLatitudeCap
	kLongitudeCap
	kLatitudeDeg
	kLongitudeDeg
	kAccuracy
	kAcc
	kTime
	kTimestamp
	kTs
	kGPS
	kLocation
	kPosition
	numLayoutKeys
)

// Layouts lists the key pairs recognised as a position in a decoded
// object, first match wins, at its top level or inside "gps", "location"
// or "position" (in that order); the accuracy is "accuracy" or "acc" and
// the device stamp "time", "timestamp" or "ts", beside the position or at
// the object's top level.
var Layouts = [][2]string{
	{"latitude", "longitude"},
	{"lat", "lon"},
	{"lat", "lng"},
	{"Latitude", "Longitude"},       // Dragino
	{"latitudeDeg", "longitudeDeg"}, // Digital Matter
}

var layoutKeys = []string{"latitude", "longitude", "lat", "lon", "lng", "Latitude", "Longitude",
	"latitudeDeg", "longitudeDeg", "accuracy", "acc", "time", "timestamp", "ts", "gps", "location", "position"}

var layoutPairs = [][2]int{{kLatitude, kLongitude}, {kLat, kLon}, {kLat, kLng}, {kLatitudeCap, kLongitudeCap}, {kLatitudeDeg, kLongitudeDeg}}

// position reads the fix in the decoded object obj (at depth) into p,
// with a device stamp when there is one; false when obj has none.
// name is the object's key, for a WrongType's field (b).
func position(obj []byte, depth int, m *Mapping, p *payload.Position, name string, b *blame) (bool, error) {
	if isNull(obj) {
		return false, nil
	}
	if m.Lat != nil {
		if _, ok := object(obj, depth); !ok {
			return false, b.on(payload.WrongType, name)
		}
		lat, err := lookup(obj, depth, m.Lat)
		if err != nil {
			return false, b.onPath(err, m.Lat)
		}
		lon, err := lookup(obj, depth, m.Lon)
		if err != nil {
			return false, b.onPath(err, m.Lon)
		}
		if lat == nil && lon == nil {
			return false, nil
		}
		acc, err := lookup(obj, depth, m.Acc)
		if err != nil {
			return false, b.onPath(err, m.Acc)
		}
		if which, err := fix(lat, lon, acc, p); err != nil {
			return false, b.onPath(err, [...]Path{m.Lat, m.Lon, m.Acc}[which])
		}
		return true, deviceStamp(obj, depth, m, nil, p, b)
	}
	var top [numLayoutKeys][]byte
	if err := fields(obj, depth, layoutKeys, top[:]); err != nil {
		return false, b.on(err, name)
	}
	found, err := layout(&top, p, b)
	if err != nil {
		return false, err
	}
	if found {
		return true, deviceStamp(obj, depth, m, &top, p, b)
	}
	for _, k := range [...]int{kGPS, kLocation, kPosition} {
		if top[k] == nil || top[k][0] != '{' {
			continue
		}
		var in [numLayoutKeys][]byte
		if err := fields(top[k], depth+1, layoutKeys, in[:]); err != nil {
			return false, err
		}
		found, err := layout(&in, p, b)
		if err != nil {
			return false, err
		}
		if found {
			if err := stampOf(&in, m, p, b); err != nil || p.HasTs {
				return true, err
			}
			return true, deviceStamp(obj, depth, m, &top, p, b)
		}
	}
	return false, nil
}

// layout reads the first pair of Layouts present in one level; a lone
// half of a pair is MissingLat or MissingLon.
func layout(lv *[numLayoutKeys][]byte, p *payload.Position, b *blame) (bool, error) {
	for _, pr := range layoutPairs {
		lat, lon := lv[pr[0]], lv[pr[1]]
		if lat == nil || lon == nil {
			continue
		}
		k := kAccuracy
		if lv[k] == nil {
			k = kAcc
		}
		which, err := fix(lat, lon, lv[k], p)
		return true, b.on(err, layoutKeys[[...]int{pr[0], pr[1], k}[which]])
	}
	for _, pr := range layoutPairs {
		switch {
		case lv[pr[0]] != nil:
			return false, payload.MissingLon
		case lv[pr[1]] != nil:
			return false, payload.MissingLat
		}
	}
	return false, nil
}

// deviceStamp reads the device's own stamp: the mapped path, or beside
// the position (lv, when the layout was found at this level).
func deviceStamp(obj []byte, depth int, m *Mapping, lv *[numLayoutKeys][]byte, p *payload.Position, b *blame) error {
	if m.NoTs {
		return nil
	}
	if m.Ts != nil {
		v, err := lookup(obj, depth, m.Ts)
		if err != nil {
			return b.onPath(err, m.Ts)
		}
		return b.onPath(stamp(v, p), m.Ts)
	}
	if lv == nil {
		return nil
	}
	return stampOf(lv, m, p, b)
}

func stampOf(lv *[numLayoutKeys][]byte, m *Mapping, p *payload.Position, b *blame) error {
	if m.NoTs || m.Ts != nil {
		return nil
	}
	for _, k := range [...]int{kTime, kTimestamp, kTs} {
		if lv[k] != nil {
			return b.on(stamp(lv[k], p), layoutKeys[k])
		}
	}
	return nil
}

// stamp reads a device stamp: epoch seconds or milliseconds (a number
// below 1e11 is seconds: 1e11 s is the year 5138, 1e11 ms is 1973), or an
// RFC 3339 string.
func stamp(v []byte, p *payload.Position) error {
	if isNull(v) {
		return nil
	}
	if v[0] == '"' {
		ns, ok, err := rfc3339(v)
		if err != nil || !ok {
			return err
		}
		p.TsNs, p.HasTs, p.Source = ns, true, payload.SourceDevice
		return nil
	}
	x, ok := payload.Number(v)
	if !ok {
		if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
			return payload.NotFinite
		}
		return payload.WrongType
	}
	unit := int64(1e9)
	if math.Abs(x) >= 1e11 {
		unit = 1e6
	}
	p.TsNs, p.HasTs, p.Source = stampNs(x, unit), true, payload.SourceDevice
	return nil
}

// stampNs converts x units of unit ns to Unix ns, saturating outside
// int64 for the clamp stage to flag; a whole x multiplies exactly.
func stampNs(x float64, unit int64) int64 {
	ns := x * float64(unit)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	case x == math.Trunc(x):
		return int64(x) * unit
	}
	return int64(math.Round(ns))
}

// fix checks and stores a position; a value may be a number or a string
// holding one (codecs often format coordinates with toFixed). which says
// which of the three an error is about: 0 lat, 1 lon, 2 acc.
func fix(latV, lonV, accV []byte, p *payload.Position) (which int, err error) {
	if p.Lat, err = coord(latV, 90, payload.MissingLat, payload.LatRange); err != nil {
		return 0, err
	}
	if p.Lon, err = coord(lonV, 180, payload.MissingLon, payload.LonRange); err != nil {
		return 1, err
	}
	if !isNull(accV) {
		if p.Acc, err = number(accV); err != nil {
			return 2, err
		}
		if p.Acc < 0 {
			return 2, payload.AccRange
		}
		p.HasAcc = true
	}
	return 0, nil
}

func coord(v []byte, limit float64, missing, outside payload.Reason) (float64, error) {
	if isNull(v) {
		return 0, missing
	}
	x, err := number(v)
	if err != nil {
		return 0, err
	}
	if x < -limit || x > limit {
		return 0, outside
	}
	return x, nil
}

// number reads a JSON number, or a string holding exactly one.
func number(v []byte) (float64, error) {
	if v[0] == '"' {
		v = v[1 : len(v)-1]
	}
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, payload.WrongType
	}
	x, ok := payload.Number(v)
	if !ok {
		if end := payload.SkipValue(v, 0, 0); end != len(v) {
			return 0, payload.WrongType // a string that is not a number
		}
		return 0, payload.NotFinite
	}
	return x, nil
}

// lookup returns the value at path in the object obj, nil when absent.
func lookup(obj []byte, depth int, path Path) ([]byte, error) {
	if path == nil {
		return nil, nil
	}
	v := obj
	for _, key := range path {
		if isNull(v) {
			return nil, nil
		}
		ms, ok := object(v, depth)
		if !ok {
			return nil, payload.WrongType
		}
		var next []byte
		seen := 0
		for {
			k, val, ok := ms.next()
			if !ok {
				break
			}
			if payload.KeyIs(k, key) {
				next = val
				seen++
			}
		}
		if seen > 1 {
			return nil, payload.DuplicateKey
		}
		if next == nil {
			return nil, nil
		}
		v = next
		depth++
	}
	return v, nil
}
