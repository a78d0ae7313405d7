package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// The append layout (docs/persistence.md): bucket "retained" holds one
// record per retained write, keyed by a sequence number that only grows,
// so that a commit's records fill the last few pages of the tree instead
// of rewriting one page per topic. A record's value is
//
//	uvarint length of the topic, the topic, the message
//
// where the message is mochi's storage.Message in JSON (Encode) and an
// empty one is a tombstone: the topic's retained message was deleted.
// The newest record of a topic is its state; older ones are superseded
// and removed by compaction (compact.go).
var recordsBucket = []byte("retained")

// seqKey appends the key of record seq to b.
func seqKey(b []byte, seq uint64) []byte { return binary.BigEndian.AppendUint64(b, seq) }

// parseKey is the sequence number of key k.
func parseKey(k []byte) (uint64, bool) {
	if len(k) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// keyName names the record under key k in reports and logs.
func keyName(k []byte) string {
	if seq, ok := parseKey(k); ok {
		return "record " + strconv.FormatUint(seq, 10)
	}
	return fmt.Sprintf("key %.64q", k)
}

// appendRecord appends the record of topic's message msg (nil: a
// tombstone) to b.
func appendRecord(b []byte, topic string, msg []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(topic)))
	b = append(b, topic...)
	return append(b, msg...)
}

var errRecord = errors.New("record header unreadable")

// parseRecord splits a record's value into its topic and message (empty:
// a tombstone). The message is not decoded here: a record whose message
// is damaged still names its topic.
func parseRecord(v []byte) (topic, msg []byte, err error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return nil, nil, errRecord
	}
	end := w + int(n)
	return v[w:end], v[end:], nil
}

// recordSize bounds the bytes appendRecord adds for topic and msg.
func recordSize(topic string, msg []byte) int {
	return binary.MaxVarintLen64 + len(topic) + len(msg)
}
