package payload

import "math"

// Position is a decoded ping body.
type Position struct {
	// Lat and Lon are WGS84 degrees, finite and within [-90, 90] and
	// [-180, 180].
	Lat, Lon float64
	// Acc is the accuracy radius in metres, >= 0; meaningful only when
	// HasAcc.
	Acc    float64
	HasAcc bool
	// TsNs is the device's event time in Unix nanoseconds, saturated to
	// the int64 range; meaningful only when HasTs. It is the device's
	// claim, not checked for plausibility here.
	TsNs  int64
	HasTs bool
	// Source is the clock TsNs was read from: SourceUnset for canonical
	// and OwnTracks pings, whose stamp is always the device's.
	Source TimeSource
	// Seq is the device's own sequence number (LoRaWAN's frame counter),
	// meaningful only when HasSeq: it orders a device's pings whose
	// stamps tie.
	Seq    uint32
	HasSeq bool
}

// TimeSource says which clock a stamp was read from, most trusted first.
type TimeSource uint8

// Time sources, in the order a LoRaWAN uplink's clocks are preferred.
const (
	// SourceUnset: not recorded (canonical and OwnTracks pings).
	SourceUnset TimeSource = iota
	// SourceDevice: a stamp the device put in its own payload.
	SourceDevice
	// SourceGatewayGPS: the earliest GPS-disciplined receive time among
	// the gateways that heard the frame.
	SourceGatewayGPS
	// SourceNetwork: the network server's receive time.
	SourceNetwork
	// SourceNone: the uplink carried no clock at all (HasTs false).
	SourceNone
	numSources
)

var sourceNames = [numSources]string{"", "device", "gateway_gps", "network_server", "none"}

// String returns the source's label, as the transition's time_source
// gives it; "" for SourceUnset.
func (s TimeSource) String() string {
	if s < numSources {
		return sourceNames[s]
	}
	return "unknown"
}

// DefaultMaxSize is the default payload size limit in bytes.
const DefaultMaxSize = 4096

// Decoder decodes payloads without allocating. It holds only its
// configuration today; still keep one per goroutine, or take them from a
// sync.Pool, as Decode may keep scratch state in it.
type Decoder struct {
	// MaxSize is the largest payload accepted, in bytes; 0 or less means
	// DefaultMaxSize.
	MaxSize int

	field string // the field of the last WrongType
}

// Field names the field whose JSON type was wrong when the last Decode
// returned WrongType ("lat", "_type", ...), "" otherwise: what a reject
// message names.
func (d *Decoder) Field() string { return d.field }

// fieldLabels are the fields' names, for Field.
var fieldLabels = [numFields]string{fType: "_type", fLat: "lat", fLon: "lon", fTs: "ts", fTst: "tst", fAcc: "acc",
	fDeviceInfo: "deviceInfo", fEndDevice: "end_device_ids"}

// blame notes field i as the one a WrongType err is about.
func (d *Decoder) blame(err error, i int) error {
	if err == WrongType {
		d.field = fieldLabels[i]
	}
	return err
}

// Decode reads one payload in format f; any Format other than Canonical,
// OwnTracks, ChirpStack or TTN reads as Auto. The result depends only on
// data and f, and the error, when not nil, is always a Reason. Checks run
// in a fixed order, first failure wins: size, JSON syntax, top-level
// object, then Uplink for a LoRaWAN uplink (its format, or Auto seeing
// deviceInfo, devEUI or end_device_ids but no _type, lat or lon), then _type
// (OwnTracks), lat, lon, time stamp and acc, each for duplicates,
// presence, JSON type, finiteness and range.
func (d *Decoder) Decode(data []byte, f Format) (Position, error) {
	limit := d.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	d.field = ""
	if len(data) > limit {
		return Position{}, TooLarge
	}
	fs := fields{data: data}
	if err := fs.scan(); err != nil {
		return Position{}, err
	}

	if f.LoRaWAN() || f != Canonical && f != OwnTracks && fs.seen&(1<<fType|1<<fLat|1<<fLon) == 0 &&
		fs.seen&(1<<fDeviceInfo|1<<fEndDevice) != 0 {
		return Position{}, Uplink
	}

	tsField, unit := fTs, int64(1e6) // canonical ts is in milliseconds
	if f == OwnTracks || f != Canonical && fs.has(fType) {
		typ, err := fs.get(fType)
		if err != nil {
			return Position{}, err
		}
		if typ == nil {
			return Position{}, MissingType
		}
		if typ[0] != '"' {
			return Position{}, d.blame(WrongType, fType)
		}
		if !isLocation(typ[1 : len(typ)-1]) {
			return Position{}, Ignored
		}
		tsField, unit = fTst, int64(1e9) // OwnTracks tst is in seconds
	}

	var p Position
	var err error
	if p.Lat, err = coord(&fs, fLat, 90, MissingLat, LatRange); err != nil {
		return Position{}, d.blame(err, fLat)
	}
	if p.Lon, err = coord(&fs, fLon, 180, MissingLon, LonRange); err != nil {
		return Position{}, d.blame(err, fLon)
	}
	ts, ok, err := number(&fs, tsField)
	if err != nil {
		return Position{}, d.blame(err, tsField)
	}
	p.TsNs, p.HasTs = stampNs(ts, unit), ok
	if p.Acc, p.HasAcc, err = number(&fs, fAcc); err != nil {
		return Position{}, d.blame(err, fAcc)
	}
	if p.Acc < 0 {
		return Position{}, AccRange
	}
	return p, nil
}

// isLocation reports whether the body of the _type string says
// "location", escaped or not.
func isLocation(raw []byte) bool {
	if string(raw) == "location" {
		return true
	}
	var buf [maxName]byte
	s, ok := unescapeASCII(raw, &buf)
	return ok && string(s) == "location"
}

// coord reads required field i, which must lie within [-limit, limit].
func coord(fs *fields, i int, limit float64, missing, outside Reason) (float64, error) {
	x, ok, err := number(fs, i)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, missing
	case x < -limit || x > limit:
		return 0, outside
	}
	return x, nil
}

// number reads field i as a finite float64; ok is false when it is absent
// or null.
func number(fs *fields, i int) (x float64, ok bool, err error) {
	v, err := fs.get(i)
	if v == nil || err != nil {
		return 0, false, err
	}
	if v[0] != '-' && !isDigit(v[0]) {
		return 0, false, WrongType
	}
	if fs.exact&(1<<i) != 0 {
		return fs.num[i], true, nil
	}
	if x, ok = parseNumber(v); !ok {
		return 0, false, NotFinite
	}
	return x, true, nil
}

// stampNs converts x device time units of unit nanoseconds each to Unix
// nanoseconds, saturating outside int64 for the clamp stage to flag.
// Integral stamps take the int64 path: x*1e6 in float64 would round
// 1764547200123 ms, while int64 multiplication is exact. Any stamp whose
// nanoseconds fit int64 is below 2^53 units, so its float64 whole part is
// exact and only a fraction, if any, carries float rounding.
func stampNs(x float64, unit int64) int64 {
	// Bounds are whole numbers, so comparing x decides for its whole part.
	limit := float64(math.MaxInt64 / unit)
	if x >= limit+1 {
		return math.MaxInt64
	}
	if x <= -limit-1 {
		return math.MinInt64
	}
	w := int64(x) // truncates toward zero
	ns := w * unit
	frac := x - float64(w) // exact
	if frac == 0 {
		return ns
	}
	f := int64(math.Round(frac * float64(unit)))
	if f > 0 && ns > math.MaxInt64-f {
		return math.MaxInt64
	}
	if f < 0 && ns < math.MinInt64-f {
		return math.MinInt64
	}
	return ns + f
}
