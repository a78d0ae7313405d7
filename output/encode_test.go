package output

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// awkward are strings whose Go quoting is not JSON (\x01, \a, \x7f, \xff)
// or that JSON escapes (quotes, backslashes, U+2028).
var awkward = []string{"\x01", "\x7f", "a\x00b\a", "\u2028\u2029", "\xff\xfe", "ok\xc3", `"q" \b\`, "tab\tnl\n", "🚚"}

// Every payload the server publishes is JSON whatever bytes its strings
// hold, and its strings read back as written (invalid UTF-8 as U+FFFD).
func TestPayloadsAreJSON(t *testing.T) {
	for _, s := range awkward {
		for name, b := range payloads(s, []byte(s)) {
			checkJSON(t, name, s, b)
		}
	}
}

// FuzzPayloads: the transition, late and reject payloads are valid JSON
// for any device id, fence id, reason, message and body.
func FuzzPayloads(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, []byte(s))
	}
	f.Fuzz(func(t *testing.T, s string, body []byte) {
		for name, b := range payloads(s, body) {
			checkJSON(t, name, s, b)
		}
	})
}

func payloads(s string, body []byte) map[string][]byte {
	now := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	tr := &engine.Transition{Device: s, Fence: s, Type: engine.Enter, Reason: s, Event: now.UnixNano(),
		Ingest: now}
	late := &engine.Late{Ping: engine.Ping{Device: s, Event: now.UnixNano(), Ingest: now}}
	return map[string][]byte{
		"transition": TransitionJSON(tr, now),
		"late":       LateJSON(late),
		"reject":     RejectJSON(s, s, s, s, body),
	}
}

func checkJSON(t *testing.T, name, s string, b []byte) {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("%s of %q is not JSON: %s", name, s, b)
	}
	var v struct{ Device string }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s of %q: %v", name, s, err)
	}
	want := []rune{}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		want, i = append(want, r), i+n
	}
	if v.Device != string(want) {
		t.Fatalf("%s: device %q read back as %q", name, s, v.Device)
	}
}

// A transition carries its causing ping's accuracy when it had one (what
// OwnTracks events need), and no acc when it had none.
func TestTransitionCarriesTheAccuracy(t *testing.T) {
	now := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	tr := &engine.Transition{Device: "d", Fence: "f", Type: engine.Enter, Event: now.UnixNano(), Ingest: now, Acc: 8.5}
	var v map[string]any
	if err := json.Unmarshal(TransitionJSON(tr, now), &v); err != nil || v["acc"] != 8.5 {
		t.Errorf("acc %v (%v), want 8.5", v["acc"], err)
	}
	tr.Acc, v = 0, nil
	if err := json.Unmarshal(TransitionJSON(tr, now), &v); err != nil || v["acc"] != nil {
		t.Errorf("acc %v (%v) of a ping without one, want none", v["acc"], err)
	}
}
