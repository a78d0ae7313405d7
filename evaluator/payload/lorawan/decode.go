package lorawan

import (
	"math"
	"time"
	"unsafe"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// Uplink is one decoded network server uplink.
type Uplink struct {
	// Format is the format read: ChirpStack or TTN.
	Format payload.Format
	// Position is the fix with its event time (HasTs, Source) and the
	// frame counter (Seq); meaningful only when HasPosition. An uplink
	// without one (a heartbeat, a battery report) is no fault.
	Position    payload.Position
	HasPosition bool
	// Device is the device id as the uplink spells it: the body of its
	// JSON string, escapes undecoded when DeviceEscaped; a slice of the
	// payload (a ChirpStack v3 devEUI in base64: of the Decoder, in hex,
	// until its next Decode), empty when the uplink names no device.
	Device        []byte
	DeviceEscaped bool
	// Named is the id the network server's own topics name the device by
	// (ChirpStack's devEui, The Things Stack's device_id), spelled as
	// Device is, whatever the mapping takes Device from: what a topic's
	// device level is checked against.
	Named        []byte
	NamedEscaped bool
	// Session identifies the device's LoRaWAN session (ChirpStack's
	// devAddr, The Things Stack's session_key_id or dev_addr), a slice of
	// the payload: the frame counter restarts with a new session.
	Session []byte
}

// Decoder decodes uplinks without allocating; keep one per goroutine.
type Decoder struct {
	// MaxSize is the largest payload accepted, in bytes; 0 or less means
	// payload.DefaultMaxSize.
	MaxSize int

	eui   [16]byte // a ChirpStack v3 base64 devEUI, in hex: what Device and Named then alias
	obj   []byte   // a ChirpStack v3 objectJSON, unescaped; grown once, then reused
	blame blame    // the field of the last WrongType
}

// Field names the field whose JSON type was wrong when the last Decode
// returned payload.WrongType ("fCnt", "rxInfo", "latitude", a mapping's
// "gps.lat"), "" otherwise: what a reject message names.
func (d *Decoder) Field() string {
	if d.blame.path != nil {
		return d.blame.path.String()
	}
	return d.blame.field
}

// blame is where the walk notes the field a WrongType is about: the
// innermost that knows it, so the first noted wins.
type blame struct {
	field string
	path  Path // a mapping's, instead of field
}

func (b *blame) on(err error, field string) error {
	if err == payload.WrongType && b.field == "" && b.path == nil {
		b.field = field
	}
	return err
}

func (b *blame) onPath(err error, p Path) error {
	if err == payload.WrongType && b.field == "" && b.path == nil {
		b.path = p
	}
	return err
}

// The top-level keys read, of both formats.
const (
	tDeviceInfo = iota // ChirpStack
	tTime
	tFCnt
	tDevAddr
	tObject
	tRxInfo
	tEndDevice // The Things Stack
	tReceivedAt
	tUplink
	tDevEUI // ChirpStack v3
	tDeviceName
	tObjectJSON
	tPublishedAt
	numTop
)

var topNames = []string{"deviceInfo", "time", "fCnt", "devAddr", "object", "rxInfo", "end_device_ids", "received_at", "uplink_message",
	"devEUI", "deviceName", "objectJSON", "publishedAt"}

// Decode reads one uplink of format f (ChirpStack or TTN; any other
// Format reads as whichever of the two the top-level keys say) with
// mapping m (nil: the common layouts). The error, when not nil, is a
// payload.Reason: payload.Ignored for a network server message that is
// not an uplink (a join, a status report), otherwise why the payload is
// bad. Checks run in a fixed order, first failure wins: size, JSON
// syntax, top-level object, duplicate keys, then the fields' types and
// ranges; a bad field is a rejection even when a better clock or another
// layout would have done without it.
func (d *Decoder) Decode(data []byte, f payload.Format, m *Mapping) (Uplink, error) {
	limit := d.MaxSize
	if limit <= 0 {
		limit = payload.DefaultMaxSize
	}
	d.blame = blame{}
	if len(data) > limit {
		return Uplink{}, payload.TooLarge
	}
	var top [numTop][]byte
	if err := walkTop(data, &top); err != nil {
		return Uplink{}, err
	}
	if !f.LoRaWAN() {
		switch {
		case top[tDeviceInfo] != nil, top[tDevEUI] != nil:
			f = payload.ChirpStack
		case top[tEndDevice] != nil:
			f = payload.TTN
		default:
			return Uplink{}, payload.Ignored
		}
	}
	if m == nil {
		m = &Mapping{}
	}
	var u Uplink
	var err error
	if f == payload.ChirpStack {
		err = d.chirpStack(&top, m, &u)
	} else {
		err = d.theThingsStack(&top, m, &u)
	}
	if err != nil {
		return Uplink{}, err
	}
	u.Format = f
	return u, nil
}

// walkTop validates data as one JSON object and records the values of
// the top-level keys read; a key given twice is DuplicateKey.
func walkTop(data []byte, top *[numTop][]byte) error {
	i := payload.SkipSpace(data, 0)
	if i == len(data) {
		return payload.NotJSON
	}
	if data[i] != '{' {
		if end := payload.SkipValue(data, i, 0); end < 0 || payload.SkipSpace(data, end) != len(data) {
			return payload.NotJSON
		}
		return payload.NotObject
	}
	ms, _ := object(data[i:], 0)
	var seen uint64
	dup := false
	for {
		key, v, ok := ms.next()
		if !ok {
			break
		}
		dup = pick(topNames, top[:], &seen, key, v) || dup
	}
	if ms.bad || payload.SkipSpace(data, i+ms.i) != len(data) {
		return payload.NotJSON
	}
	if dup {
		return payload.DuplicateKey
	}
	return nil
}

// pick records v in vals under the first of names that key spells, and
// reports whether that name was seen before.
func pick(names []string, vals [][]byte, seen *uint64, key, v []byte) (dup bool) {
	for n, name := range names {
		if payload.KeyIs(key, name) {
			bit := uint64(1) << n
			dup = *seen&bit != 0
			*seen |= bit
			vals[n] = v
			return dup
		}
	}
	return false
}

// fields walks the object v (nil or null: an empty one) at depth and
// records the keys of names in vals.
func fields(v []byte, depth int, names []string, vals [][]byte) error {
	if isNull(v) {
		return nil
	}
	ms, ok := object(v, depth)
	if !ok {
		return payload.WrongType
	}
	var seen uint64
	dup := false
	for {
		key, val, ok := ms.next()
		if !ok {
			break
		}
		dup = pick(names, vals, &seen, key, val) || dup
	}
	if dup {
		return payload.DuplicateKey
	}
	return nil
}

var (
	csDeviceNames = []string{"devEui", "deviceName"}
	csRxNames     = []string{"gwTime", "time", "nsTime"}
)

// chirpStack reads a ChirpStack v4 event, or a v3 one (devEUI, deviceName
// and objectJSON or object at the top level: chirpStackV3).
func (d *Decoder) chirpStack(top *[numTop][]byte, m *Mapping, u *Uplink) error {
	if top[tRxInfo] == nil && top[tFCnt] == nil && top[tObject] == nil && top[tObjectJSON] == nil {
		return payload.Ignored // a join, status, ack or log event
	}
	obj, objName := top[tObject], "object"
	if top[tDeviceInfo] == nil && top[tDevEUI] != nil {
		var err error
		if obj, err = d.chirpStackV3(top, m, u); err != nil {
			return err
		}
		if isNull(top[tObject]) && !isNull(top[tObjectJSON]) {
			objName = "objectJSON"
		}
	} else {
		var dev [2][]byte
		if err := fields(top[tDeviceInfo], 1, csDeviceNames, dev[:]); err != nil {
			return d.blame.on(err, "deviceInfo")
		}
		id := dev[0]
		if m.ID == "deviceName" {
			id = dev[1]
		}
		u.Device, u.DeviceEscaped = stringBody(id)
		u.Named, u.NamedEscaped = stringBody(dev[0])
	}
	u.Session, _ = stringBody(top[tDevAddr])
	p := &u.Position
	var err error
	if p.Seq, err = counter(top[tFCnt]); err != nil {
		return d.blame.on(err, "fCnt")
	}
	p.HasSeq = true
	if u.HasPosition, err = position(obj, 1, m, p, objName, &d.blame); err != nil {
		return err
	}
	if p.HasTs {
		return nil
	}
	// The earliest GPS time among the gateways, else the network server's.
	var gps, ns int64
	hasGPS, hasNS := false, false
	if !isNull(top[tRxInfo]) {
		es, ok := array(top[tRxInfo], 1)
		if !ok {
			return d.blame.on(payload.WrongType, "rxInfo")
		}
		for {
			v, ok := es.next()
			if !ok {
				break
			}
			var rx [3][]byte
			if err := fields(v, 2, csRxNames, rx[:]); err != nil {
				return d.blame.on(err, "rxInfo")
			}
			gw, name := rx[0], csRxNames[0]
			if isNull(gw) {
				gw, name = rx[1], csRxNames[1] // v4 before gwTime was named, and v3
			}
			if err := earliest(gw, &gps, &hasGPS); err != nil {
				return d.blame.on(err, name)
			}
			if err := earliest(rx[2], &ns, &hasNS); err != nil {
				return d.blame.on(err, csRxNames[2])
			}
		}
	}
	nsTime, hasTime, err := rfc3339(top[tTime])
	if err != nil {
		return d.blame.on(err, "time")
	}
	if !hasTime { // v3: when the application server published it
		if nsTime, hasTime, err = rfc3339(top[tPublishedAt]); err != nil {
			return d.blame.on(err, "publishedAt")
		}
	}
	switch {
	case hasGPS:
		p.TsNs, p.HasTs, p.Source = gps, true, payload.SourceGatewayGPS
	case hasTime:
		p.TsNs, p.HasTs, p.Source = nsTime, true, payload.SourceNetwork
	case hasNS:
		p.TsNs, p.HasTs, p.Source = ns, true, payload.SourceNetwork
	default:
		p.Source = payload.SourceNone
	}
	return nil
}

var (
	ttIDNames     = []string{"device_id", "dev_eui", "dev_addr"}
	ttUplinkNames = []string{"f_cnt", "session_key_id", "decoded_payload", "locations", "rx_metadata", "received_at"}
	ttRxNames     = []string{"gps_time"}
	ttLocNames    = []string{"latitude", "longitude", "accuracy", "source"}
)

// theThingsStack reads a The Things Stack v3 application up message.
func (d *Decoder) theThingsStack(top *[numTop][]byte, m *Mapping, u *Uplink) error {
	if isNull(top[tUplink]) {
		return payload.Ignored // a join-accept, downlink event or the like
	}
	var ids [3][]byte
	if err := fields(top[tEndDevice], 1, ttIDNames, ids[:]); err != nil {
		return d.blame.on(err, "end_device_ids")
	}
	id := ids[0]
	if m.ID == "dev_eui" {
		id = ids[1]
	}
	u.Device, u.DeviceEscaped = stringBody(id)
	u.Named, u.NamedEscaped = stringBody(ids[0])
	var up [6][]byte
	if err := fields(top[tUplink], 1, ttUplinkNames, up[:]); err != nil {
		return d.blame.on(err, "uplink_message")
	}
	if u.Session, _ = stringBody(up[1]); u.Session == nil {
		u.Session, _ = stringBody(ids[2])
	}
	p := &u.Position
	var err error
	if p.Seq, err = counter(up[0]); err != nil {
		return d.blame.on(err, "f_cnt")
	}
	p.HasSeq = true
	if u.HasPosition, err = position(up[2], 2, m, p, "decoded_payload", &d.blame); err != nil {
		return err
	}
	if !u.HasPosition && m.Lat == nil {
		if u.HasPosition, err = solved(up[3], p, &d.blame); err != nil {
			return err
		}
	}
	if p.HasTs {
		return nil
	}
	var gps int64
	hasGPS := false
	if !isNull(up[4]) {
		es, ok := array(up[4], 2)
		if !ok {
			return d.blame.on(payload.WrongType, "rx_metadata")
		}
		for {
			v, ok := es.next()
			if !ok {
				break
			}
			var rx [1][]byte
			if err := fields(v, 3, ttRxNames, rx[:]); err != nil {
				return d.blame.on(err, "rx_metadata")
			}
			if err := earliest(rx[0], &gps, &hasGPS); err != nil {
				return d.blame.on(err, "gps_time")
			}
		}
	}
	if hasGPS {
		p.TsNs, p.HasTs, p.Source = gps, true, payload.SourceGatewayGPS
		return nil
	}
	for _, v := range [2][]byte{up[5], top[tReceivedAt]} { // the Network Server's, else the Application Server's
		ns, ok, err := rfc3339(v)
		if err != nil {
			return d.blame.on(err, "received_at")
		}
		if ok {
			p.TsNs, p.HasTs, p.Source = ns, true, payload.SourceNetwork
			return nil
		}
	}
	p.Source = payload.SourceNone
	return nil
}

// solved reads the first location in The Things Stack's locations map
// that the network or the device determined: a registry (user-set)
// location is where someone once put the device, not where it is.
func solved(v []byte, p *payload.Position, b *blame) (bool, error) {
	if isNull(v) {
		return false, nil
	}
	ms, ok := object(v, 2)
	if !ok {
		return false, b.on(payload.WrongType, "locations")
	}
	for {
		_, loc, ok := ms.next()
		if !ok {
			return false, nil
		}
		var f [4][]byte
		if err := fields(loc, 3, ttLocNames, f[:]); err != nil {
			return false, b.on(err, "locations")
		}
		if src, _ := stringBody(f[3]); string(src) == "SOURCE_REGISTRY" {
			continue
		}
		if f[0] == nil && f[1] == nil {
			continue
		}
		if which, err := fix(f[0], f[1], f[2], p); err != nil {
			return false, b.on(err, ttLocNames[which])
		}
		return true, nil
	}
}

// earliest lowers *min to the RFC 3339 time v, when v is one.
func earliest(v []byte, min *int64, has *bool) error {
	t, ok, err := rfc3339(v)
	if err != nil || !ok {
		return err
	}
	if !*has || t < *min {
		*min, *has = t, true
	}
	return nil
}

// rfc3339 reads a JSON string holding an RFC 3339 time as Unix ns; ok is
// false for an absent or null value.
func rfc3339(v []byte) (ns int64, ok bool, err error) {
	if isNull(v) {
		return 0, false, nil
	}
	s, escaped := stringBody(v)
	if s == nil || escaped {
		return 0, false, payload.WrongType
	}
	// The string aliases the payload only for the call.
	t, perr := time.Parse(time.RFC3339Nano, unsafe.String(unsafe.SliceData(s), len(s)))
	if perr != nil {
		return 0, false, payload.WrongType
	}
	return t.UnixNano(), true, nil
}

// counter reads a frame counter: absent or null is 0, as both servers
// leave out zero values.
func counter(v []byte) (uint32, error) {
	if isNull(v) {
		return 0, nil
	}
	x, ok := payload.Number(v)
	if !ok || x < 0 || x > math.MaxUint32 || x != math.Trunc(x) {
		return 0, payload.WrongType
	}
	return uint32(x), nil
}

// stringBody returns the body of the JSON string v and whether it holds
// escapes; nil when v is not a string.
func stringBody(v []byte) (body []byte, escaped bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	body = v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' {
			return body, true
		}
	}
	return body, false
}
