package lorawan

import (
	"encoding/base64"
	"encoding/hex"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// ChirpStack v3's application server publishes an uplink with its ids at
// the top level: devEUI (hex with the legacy json_v3 marshaler, base64
// with the Protobuf JSON one), deviceName, and the codec's result as
// object (json_v3) or as objectJSON, a string holding the JSON; rxInfo's
// time is the gateway's GPS receive time, publishedAt the server's.

// chirpStackV3 reads the ids of a v3 uplink into u and returns its decoded
// object: object, or objectJSON unescaped into the decoder's buffer.
func (d *Decoder) chirpStackV3(top *[numTop][]byte, m *Mapping, u *Uplink) ([]byte, error) {
	eui, escaped := stringBody(top[tDevEUI])
	if eui == nil && !isNull(top[tDevEUI]) {
		return nil, d.blame.on(payload.WrongType, "devEUI")
	}
	if !escaped && (len(eui) != len(d.eui) || !isHex(eui)) {
		// Base64 of the 8 bytes: the topic names the device in hex.
		var raw [9]byte // what 12 characters can hold: room for a malformed one
		if len(eui) == 12 {
			if n, err := base64.StdEncoding.Decode(raw[:], eui); err == nil && n == 8 {
				hex.Encode(d.eui[:], raw[:8])
				eui = d.eui[:]
			}
		}
	}
	u.Named, u.NamedEscaped = eui, escaped
	u.Device, u.DeviceEscaped = eui, escaped
	if m.ID == "deviceName" {
		u.Device, u.DeviceEscaped = stringBody(top[tDeviceName])
	}
	obj := top[tObject]
	if isNull(obj) && !isNull(top[tObjectJSON]) {
		s, escaped := stringBody(top[tObjectJSON])
		if s == nil {
			return nil, d.blame.on(payload.WrongType, "objectJSON")
		}
		obj = s
		if escaped {
			var ok bool
			if d.obj, ok = appendUnescaped(d.obj[:0], s); !ok {
				return nil, payload.NotJSON
			}
			obj = d.obj
		}
		// The string holds one JSON value, as the top level must be.
		i := payload.SkipSpace(obj, 0)
		if i == len(obj) {
			return nil, nil // "": no codec
		}
		end := payload.SkipValue(obj, i, 1)
		if end < 0 || payload.SkipSpace(obj, end) != len(obj) {
			return nil, payload.NotJSON
		}
		obj = obj[i:end]
	}
	return obj, nil
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// appendUnescaped appends the body of a JSON string that SkipValue
// accepted, its escapes decoded; ok is false on an escape that is not
// JSON's (which SkipValue would not have accepted).
func appendUnescaped(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(s) {
			return dst, false
		}
		i++
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2, ok = hex4(s, i+3)
				}
				if ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}

// hex4 reads the four hex digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
