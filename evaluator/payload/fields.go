package payload

// The fields Decode reads, as bit positions for presence and duplicates.
const (
	fType = iota
	fLat
	fLon
	fTs
	fTst
	fAcc
	fDeviceInfo // ChirpStack's deviceInfo (v4) or devEUI (v3), recognised by Auto
	fEndDevice  // The Things Stack's end_device_ids, recognised by Auto
	numFields
)

// fields locates the top-level values Decode cares about inside data. A
// null value is kept so that key presence stays visible to Auto detection.
type fields struct {
	data       []byte
	start, end [numFields]int     // the value's bytes, quotes included
	num        [numFields]float64 // the value, when exact
	seen, dup  uint8
	exact      uint8 // numbers scanNumber read exactly in passing
}

// set records field f's value, data[start:end]; x is its number when
// exact.
func (fs *fields) set(f, start, end int, x float64, exact bool) {
	bit := uint8(1) << f
	fs.dup |= fs.seen & bit
	fs.seen |= bit
	fs.start[f], fs.end[f], fs.num[f] = start, end, x
	if exact {
		fs.exact |= bit
	} else {
		fs.exact &^= bit
	}
}

func (fs *fields) has(f int) bool { return fs.seen&(1<<f) != 0 }

// get returns field f's raw JSON value, nil when absent or null.
func (fs *fields) get(f int) ([]byte, error) {
	if fs.dup&(1<<f) != 0 {
		return nil, DuplicateKey
	}
	if !fs.has(f) {
		return nil, nil
	}
	v := fs.data[fs.start[f]:fs.end[f]]
	if v[0] == 'n' { // scanned, so 'n' can only begin null
		return nil, nil
	}
	return v, nil
}

// fieldOf returns the field a top-level key names, or -1. key is the
// validated body of a JSON string, escapes undecoded.
func fieldOf(key []byte) int {
	if f := fieldNamed(key); f >= 0 {
		return f
	}
	// Only a \uXXXX escape yields a letter or '_', so an escaped spelling
	// of a name is 7 ("\u0074s") to 84 (all of "end_device_ids" escaped)
	// bytes long.
	if len(key) < 7 || len(key) > 84 {
		return -1
	}
	var buf [maxName]byte
	if name, ok := unescapeASCII(key, &buf); ok {
		return fieldNamed(name)
	}
	return -1
}

// fieldNamed returns the field called name, or -1.
func fieldNamed(name []byte) int {
	switch string(name) {
	case "_type":
		return fType
	case "lat":
		return fLat
	case "lon":
		return fLon
	case "ts":
		return fTs
	case "tst":
		return fTst
	case "acc":
		return fAcc
	case "deviceInfo", "devEUI": // ChirpStack v4's, v3's
		return fDeviceInfo
	case "end_device_ids":
		return fEndDevice
	}
	return -1
}

// maxName bounds the decoded strings Decode compares: the names in
// fieldOf and the _type value "location".
const maxName = 16

// unescapeASCII decodes the validated body of a JSON string into buf. It
// gives up (ok false) when the result would exceed buf or hold non-ASCII,
// as no name or _type value Decode compares against does: so UTF-8 and
// surrogate pairs need no decoding, and neither do the U+FFFD that
// encoding/json makes of invalid UTF-8 and lone surrogates.
func unescapeASCII(raw []byte, buf *[maxName]byte) (s []byte, ok bool) {
	n := 0
	for i := 0; i < len(raw); n++ {
		if n == len(buf) {
			return nil, false
		}
		c := raw[i]
		if c >= 0x80 {
			return nil, false
		}
		if c != '\\' {
			buf[n] = c
			i++
			continue
		}
		switch e := raw[i+1]; e { // validated: the escape is complete
		case 'u':
			h := raw[i+2 : i+6]
			if h[0] != '0' || h[1] != '0' || hexVal[h[2]] > 7 {
				return nil, false
			}
			buf[n] = byte(hexVal[h[2]])<<4 | byte(hexVal[h[3]])
			i += 6
		default:
			buf[n] = unescapeByte[e]
			i += 2
		}
	}
	return buf[:n], true
}

// unescapeByte decodes the single-character escapes.
var unescapeByte = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
