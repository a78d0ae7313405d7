package subjects

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// kvKey is what a JetStream KV key may be (nats.go's keyValid): the
// characters, no '.' at either end, no empty token.
var kvKey = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)

func validKey(k string) bool {
	return kvKey.MatchString(k) && !strings.HasPrefix(k, ".") && !strings.HasSuffix(k, ".") && !strings.Contains(k, "..")
}

// TestPropertyRetainedKey: any topic, whatever bytes its device id
// holds, has a valid KV key that gives the topic back; a plain topic is
// its own key; and a key names one topic at most (no two keys decode to
// the same topic, so the bucket cannot hold one topic twice).
func TestPropertyRetainedKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topic := rapid.OneOf(
			rapid.StringN(1, 40, -1),
			rapid.StringMatching(`geofence/[a-z]{1,4}/[-_.=a-zA-Z0-9 +#$*>]{1,12}`),
			rapid.Map(rapid.SliceOfN(rapid.Byte(), 1, 24), func(b []byte) string { return string(b) }),
		).Draw(t, "topic")
		k := RetainedKey(topic)
		if !validKey(k) {
			t.Fatalf("RetainedKey(%q) = %q: not a valid KV key", topic, k)
		}
		back, err := RetainedTopic(k)
		if err != nil || back != topic {
			t.Fatalf("RetainedTopic(%q) = %q, %v; want %q", k, back, err, topic)
		}
	})
}

func TestPropertyRetainedKeyCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.StringMatching(`[-/_=.a-zA-Z0-9]{1,16}`).Draw(t, "key")
		topic, err := RetainedTopic(k)
		if err != nil {
			return
		}
		if again := RetainedKey(topic); again != k {
			t.Fatalf("key %q names topic %q, whose key is %q", k, topic, again)
		}
	})
}

func TestRetainedKeyReadable(t *testing.T) {
	for topic, want := range map[string]string{
		"geofence/depot/truck-42":   "geofence/depot/truck-42",
		"geofence/depot/v1.2":       "geofence/depot/v1=2E2",
		"geofence/a=b/x y":          "geofence/a=3Db/x=20y",
		"geofence/zone/caf\xc3\xa9": "geofence/zone/caf=C3=A9",
	} {
		if got := RetainedKey(topic); got != want {
			t.Errorf("RetainedKey(%q) = %q, want %q", topic, got, want)
		}
	}
	for _, bad := range []string{"a=2", "a=2e", "a=41", "a.b", "a=zz"} {
		if _, err := RetainedTopic(bad); err == nil {
			t.Errorf("RetainedTopic(%q): no error", bad)
		}
	}
}
