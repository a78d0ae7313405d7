package subjects

import (
	"errors"
	"fmt"
	"strings"
)

// RetainedBucket is the JetStream KV bucket holding the current value
// of every retained output (a transition topic's last state): the
// workers write it, every serve --cluster node follows it into its own
// retained set (package retainfollow).
const RetainedBucket = "edgefence-retained"

// RetainedSubject is the subject a value of topic is put on in the
// retained bucket (a KV bucket's keys are subjects of its stream).
func RetainedSubject(topic string) string { return "$KV." + RetainedBucket + "." + RetainedKey(topic) }

// ErrRetainedKey is why a key of the retained bucket names no topic.
var ErrRetainedKey = errors.New("not a retained bucket key")

// RetainedKey returns the key of an MQTT topic in the retained bucket.
// A KV key holds only [-/_=.a-zA-Z0-9] and no empty '.' token, while a
// device id in a topic may hold any byte: letters, digits, '-', '_'
// and '/' stay as they are, so a plain topic reads as itself
// (geofence/depot/truck-42), and every other byte, '.' and '=' included,
// is '=' and two upper-case hex digits. The key of a non-empty topic is
// a valid key; RetainedTopic reverses it.
func RetainedKey(topic string) string {
	var b strings.Builder
	b.Grow(len(topic))
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		if keyByte(c) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('=')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// RetainedTopic returns the topic a retained bucket key was made from
// by RetainedKey; a key RetainedKey does not make is an error.
func RetainedTopic(key string) (string, error) {
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case keyByte(c):
			b.WriteByte(c)
		case c == '=' && i+2 < len(key):
			hi, ok1 := unhex(key[i+1])
			lo, ok2 := unhex(key[i+2])
			d := hi<<4 | lo
			if !ok1 || !ok2 || keyByte(d) {
				return "", fmt.Errorf("%w: %q: bad escape at %d", ErrRetainedKey, key, i)
			}
			b.WriteByte(d)
			i += 2
		default:
			return "", fmt.Errorf("%w: %q: byte %#x at %d", ErrRetainedKey, key, c, i)
		}
	}
	return b.String(), nil
}

// keyByte reports whether c stands for itself in a retained bucket key.
func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '/'
}

// unhex reads an upper-case hex digit, as RetainedKey writes them.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
