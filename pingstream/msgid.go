package pingstream

import (
	"encoding/hex"
	"hash/fnv"
	"strconv"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// MsgID is a ping's Nats-Msg-Id: a hash of the tracker's own device,
// stamp and position (and frame counter), the same for every copy a
// tracker sends, whichever node receives it. A ping with neither stamp
// nor frame counter has none: two of them at one spot may be two pings.
func MsgID(id string, pos *payload.Position) string {
	if !pos.HasTs && !pos.HasSeq {
		return ""
	}
	b := make([]byte, 0, 128)
	b = strconv.AppendQuote(b, id)
	b = append(b, ' ')
	if pos.HasTs {
		b = strconv.AppendInt(b, pos.TsNs, 10)
	}
	b = append(b, ' ')
	if pos.HasSeq {
		b = strconv.AppendUint(b, uint64(pos.Seq), 10)
	}
	b = append(b, ' ')
	b = strconv.AppendFloat(b, pos.Lat, 'g', -1, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, pos.Lon, 'g', -1, 64)
	if pos.HasAcc {
		b = append(b, ' ')
		b = strconv.AppendFloat(b, pos.Acc, 'g', -1, 64)
	}
	return hashID(b)
}

// hashID is FNV-1a 128 of b in hex: two different pings of a window
// share an id with a chance of about 2^-128 times the pairs.
func hashID(b []byte) string {
	h := fnv.New128a()
	_, _ = h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
