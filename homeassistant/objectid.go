package homeassistant

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxObjectID bounds an object id so that the entity id Home Assistant
// derives from it ("device_tracker.<node>_<object id>") stays within its
// 255 characters for a node id of up to 40.
const maxObjectID = 200

// objectID is a device or fence id as Home Assistant's object ids allow
// ([a-zA-Z0-9_-]), escaped so that two ids never share one: an id's entity
// can be nobody else's. kind_<escaped id>, or, when that is longer than
// maxObjectID, kindh_<128-bit hash of the id> (which no escaped form
// spells: it has h where the other has _).
func objectID(kind, id string) string {
	b := make([]byte, 0, len(kind)+1+len(id))
	b = append(b, kind...)
	b = append(b, '_')
	b = escape(b, id)
	if len(b) <= maxObjectID {
		return string(b)
	}
	sum := sha256.Sum256([]byte(id))
	return kind + "h_" + hex.EncodeToString(sum[:16])
}

// pairID is the object id of a device's occupancy of a fence:
// in_<escaped device>_x<escaped fence>. The separator _x is no escape's
// (after _ an escape has _ or a hex digit), so the pair reads back: two
// pairs never share one. When longer than maxObjectID it is inh_<128-bit
// hash of the device id, a NUL, the fence id> (ids have no NUL: they are
// topic levels).
func pairID(device, fence string) string {
	b := make([]byte, 0, 5+len(device)+len(fence))
	b = append(b, "in_"...)
	b = escape(b, device)
	b = append(b, "_x"...)
	b = escape(b, fence)
	if len(b) <= maxObjectID {
		return string(b)
	}
	sum := sha256.Sum256([]byte(device + "\x00" + fence))
	return "inh_" + hex.EncodeToString(sum[:16])
}

// escape appends id with every byte outside [a-zA-Z0-9-] written as _XX
// (hex) and '_' as __: reversible, so injective, and ids of letters,
// digits and '-' (most ids) read as themselves.
func escape(b []byte, id string) []byte {
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b = append(b, c)
		case c == '_':
			b = append(b, '_', '_')
		default:
			b = append(b, '_', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return b
}

func (d *Discovery) trackerTopic(id string) string {
	return d.cfg.Prefix + "/device_tracker/" + d.cfg.Node + "/" + objectID("device", id) + "/config"
}

func (d *Discovery) sensorTopic(id string) string {
	return d.cfg.Prefix + "/sensor/" + d.cfg.Node + "/" + objectID("fence", id) + "/config"
}

func (d *Discovery) occupancyTopic(device, fence string) string {
	return d.cfg.Prefix + "/binary_sensor/" + d.cfg.Node + "/" + pairID(device, fence) + "/config"
}

// The state topics carry the ids as topic levels: they are valid ones
// (the ingest path and the fence loader check).
func (d *Discovery) deviceBase(id string) string { return d.cfg.Base + "/device/" + id }
func (d *Discovery) fenceBase(id string) string  { return d.cfg.Base + "/fence/" + id }
func (d *Discovery) occupancyState(device, fence string) string {
	return d.cfg.Base + "/device/" + device + "/in/" + fence
}
