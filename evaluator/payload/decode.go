package payload

import (
	"bytes"
	"math"
	"strconv"
	"unsafe"

	"github.com/valyala/fastjson"
)

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
}

// DefaultMaxSize is the default payload size limit in bytes.
const DefaultMaxSize = 4096

// Decoder decodes payloads, reusing its parser state between calls so the
// steady state allocates nothing. It is not safe for concurrent use: keep
// one per goroutine, or take them from a sync.Pool.
type Decoder struct {
	// MaxSize is the largest payload accepted, in bytes; 0 or less means
	// DefaultMaxSize.
	MaxSize int

	p   fastjson.Parser
	num []byte // scratch for a number's text; fastjson does not expose it
}

// The fields Decode reads, as bit positions for duplicate tracking.
const (
	fType = iota
	fLat
	fLon
	fTs
	fTst
	fAcc
	numFields
)

// fields holds the top-level values Decode cares about; a null value is
// kept so that key presence stays visible to Auto detection.
type fields struct {
	v   [numFields]*fastjson.Value
	dup uint8
}

func (fs *fields) visit(key []byte, v *fastjson.Value) {
	var i int
	switch string(key) {
	case "_type":
		i = fType
	case "lat":
		i = fLat
	case "lon":
		i = fLon
	case "ts":
		i = fTs
	case "tst":
		i = fTst
	case "acc":
		i = fAcc
	default:
		return
	}
	if fs.v[i] != nil {
		fs.dup |= 1 << i
	}
	fs.v[i] = v
}

// get returns field i, nil when absent or null.
func (fs *fields) get(i int) (*fastjson.Value, error) {
	if fs.dup&(1<<i) != 0 {
		return nil, DuplicateKey
	}
	v := fs.v[i]
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	return v, nil
}

// Decode reads one payload in format f; any Format other than Canonical
// or OwnTracks reads as Auto. The result depends only on data and f, and
// the error, when not nil, is always a Reason. Checks run in a fixed
// order, first failure wins: size, JSON syntax, top-level object, then
// _type (OwnTracks), lat, lon, time stamp and acc, each for duplicates,
// presence, JSON type, finiteness and range.
func (d *Decoder) Decode(data []byte, f Format) (Position, error) {
	limit := d.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	if len(data) > limit {
		return Position{}, TooLarge
	}
	// fastjson's parser is lenient (NaN, 1.2.3, bad escapes); its
	// validator, with one gap closed by ctlInString, holds the input to
	// strict JSON, so numbers reaching strconv are in JSON's grammar.
	if fastjson.ValidateBytes(data) != nil || bytes.IndexByte(data, '\\') >= 0 && ctlInString(data) {
		return Position{}, NotJSON
	}
	v, err := d.p.ParseBytes(data)
	if err != nil { // valid but nested deeper than fastjson.MaxDepth
		return Position{}, NotJSON
	}
	if v.Type() != fastjson.TypeObject {
		return Position{}, NotObject
	}
	var fs fields
	v.GetObject().Visit(fs.visit)

	tsField, unit := fTs, int64(1e6) // canonical ts is in milliseconds
	if f == OwnTracks || f != Canonical && fs.v[fType] != nil {
		typ, err := fs.get(fType)
		if err != nil {
			return Position{}, err
		}
		if typ == nil {
			return Position{}, MissingType
		}
		if typ.Type() != fastjson.TypeString {
			return Position{}, WrongType
		}
		if string(typ.GetStringBytes()) != "location" {
			return Position{}, Ignored
		}
		tsField, unit = fTst, int64(1e9) // OwnTracks tst is in seconds
	}

	var p Position
	if p.Lat, err = d.coord(&fs, fLat, 90, MissingLat, LatRange); err != nil {
		return Position{}, err
	}
	if p.Lon, err = d.coord(&fs, fLon, 180, MissingLon, LonRange); err != nil {
		return Position{}, err
	}
	ts, ok, err := d.number(&fs, tsField)
	if err != nil {
		return Position{}, err
	}
	p.TsNs, p.HasTs = stampNs(ts, unit), ok
	if p.Acc, p.HasAcc, err = d.number(&fs, fAcc); err != nil {
		return Position{}, err
	}
	if p.Acc < 0 {
		return Position{}, AccRange
	}
	return p, nil
}

// coord reads required field i, which must lie within [-limit, limit].
func (d *Decoder) coord(fs *fields, i int, limit float64, missing, outside Reason) (float64, error) {
	x, ok, err := d.number(fs, i)
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
func (d *Decoder) number(fs *fields, i int) (x float64, ok bool, err error) {
	v, err := fs.get(i)
	if v == nil || err != nil {
		return 0, false, err
	}
	if v.Type() != fastjson.TypeNumber {
		return 0, false, WrongType
	}
	// strconv rather than fastjson's own float parsing: fastfloat is off by
	// an ulp on exponent forms such as 1.5e-07, which encoding/json emits,
	// and a decoder should hand back exactly what was encoded.
	d.num = v.MarshalTo(d.num[:0])
	// The string aliases d.num only for the call; ParseFloat keeps nothing.
	x, _ = strconv.ParseFloat(unsafe.String(unsafe.SliceData(d.num), len(d.num)), 64)
	// Strict JSON leaves range as the only possible failure: overflow
	// yields ±Inf (underflow a harmless 0).
	if math.IsInf(x, 0) || math.IsNaN(x) {
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
	w := math.Trunc(x)
	if w > float64(math.MaxInt64/unit) {
		return math.MaxInt64
	}
	if w < float64(math.MinInt64/unit) {
		return math.MinInt64
	}
	ns := int64(w) * unit
	frac := int64(math.Round((x - w) * float64(unit)))
	if frac > 0 && ns > math.MaxInt64-frac {
		return math.MaxInt64
	}
	if frac < 0 && ns < math.MinInt64-frac {
		return math.MinInt64
	}
	return ns + frac
}

// ctlInString reports a raw control character inside a JSON string.
// fastjson.Validate checks only the part of a string after its last escape
// sequence, so "a<0x01>\n" slips through it; escape-free payloads, the
// usual case, need no second look.
func ctlInString(data []byte) bool {
	in, esc := false, false
	for _, c := range data {
		switch {
		case in && c < 0x20:
			return true
		case esc:
			esc = false
		case c == '\\':
			esc = in
		case c == '"':
			in = !in
		}
	}
	return false
}
