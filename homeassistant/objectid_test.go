package homeassistant

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Under the 32-bit hash, an id of allowed characters that spells another
// id's replaced form and hash ("a.b" → "a_b_<hash>") took over that id's
// entity; so did any pair of ids whose hashes collided.
func TestObjectIDsDoNotCollide(t *testing.T) {
	h := fnv.New32a()
	h.Write([]byte("truck.1"))
	squatter := fmt.Sprintf("truck_1_%08x", h.Sum32())
	for _, pair := range [][2]string{
		{"truck.1", squatter},
		{"truck.1", "truck_1"},
		{"truck_1", "truck__1"},
		{"a.b", "a:b"},
		{"Truck-1", "truck-1"},
	} {
		a, b := objectID("device", pair[0]), objectID("device", pair[1])
		if a == b {
			t.Errorf("%q and %q share the object id %s", pair[0], pair[1], a)
		}
	}
	// Ids of [a-zA-Z0-9-] keep the object id they had.
	if got := objectID("device", "van-1"); got != "device_van-1" {
		t.Errorf("van-1: %s, want device_van-1 as before", got)
	}
}

// The mapping is injective: the object id reads back as the id (the
// escaped form), or is a 128-bit hash that no escaped form can spell; and
// it holds only what Home Assistant allows, within maxObjectID.
func TestObjectIDInjective(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.OneOf(
			rapid.StringMatching(`[a-z_.-]{0,12}`),
			rapid.StringN(0, 130, 130),
		).Draw(t, "id")
		other := rapid.OneOf(
			rapid.Just(id+"_"),
			rapid.StringMatching(`[a-z_.-]{0,12}`),
			rapid.StringN(0, 130, 130),
		).Draw(t, "other")
		a := objectID("fence", id)
		if len(a) > maxObjectID || strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("%q: object id %q is too long or has characters HA refuses", id, a)
		}
		if back, ok := unescape(strings.TrimPrefix(a, "fence_")); strings.HasPrefix(a, "fence_") && (!ok || back != id) {
			t.Fatalf("%q: object id %q reads back as %q", id, a, back)
		}
		if id != other && a == objectID("fence", other) {
			t.Fatalf("%q and %q share the object id %s", id, other, a)
		}
	})
}

// unescape reverses escape; ok is false on a form escape never writes.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '_' {
			b.WriteByte('_')
			i++
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// A device's occupancy of a fence is its own: the object id reads back
// as the pair (the separator _x is no escape's), or is a hash no escaped
// pair spells; and it holds only what Home Assistant allows, within
// maxObjectID.
func TestPairIDInjective(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.OneOf(rapid.StringMatching(`[a-z_x.-]{0,8}`), rapid.StringN(0, 120, 120))
		dev, fence := ids.Draw(t, "device"), ids.Draw(t, "fence")
		a := pairID(dev, fence)
		if len(a) > maxObjectID || strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("%q %q: object id %q is too long or has characters HA refuses", dev, fence, a)
		}
		if strings.HasPrefix(a, "inh_") {
			return
		}
		d, f, ok := unpair(strings.TrimPrefix(a, "in_"))
		if !ok || d != dev || f != fence {
			t.Fatalf("(%q, %q): object id %q reads back as (%q, %q)", dev, fence, a, d, f)
		}
	})
	if got := pairID("van-1", "zone-museumsinsel"); got != "in_van-1_xzone-museumsinsel" {
		t.Errorf("pairID = %s", got)
	}
}

// unpair splits an escaped pair at its separator and unescapes both.
func unpair(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			continue
		}
		if i+1 < len(s) && s[i+1] == 'x' {
			d, ok1 := unescape(s[:i])
			f, ok2 := unescape(s[i+2:])
			return d, f, ok1 && ok2
		}
		if i+1 < len(s) && s[i+1] == '_' {
			i++
		} else {
			i += 2
		}
	}
	return "", "", false
}
