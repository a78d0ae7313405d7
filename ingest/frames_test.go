package ingest

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// A reader restored from another's frame windows (a scale-out worker
// taking a partition over from its checkpoint) admits and drops exactly
// the frames the other would have, whatever the devices, sessions,
// counters, copies and silences (across the generations that forget a
// device), and wherever the hand-over falls.
func TestPropertyFramesRestored(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type frame struct {
			dev     string
			session uint64
			seq     uint32
			at      time.Time
		}
		var frames []frame
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(rapid.Int64Range(0, int64(frameMemory)).Draw(t, "start")))
		seqs, sessions := map[string]uint32{}, map[string]uint64{}
		for range rapid.IntRange(1, 300).Draw(t, "frames") {
			dev := fmt.Sprintf("dev-%d", rapid.IntRange(0, 19).Draw(t, "dev"))
			switch rapid.IntRange(0, 19).Draw(t, "kind") {
			case 0, 1, 2: // a copy, or a frame a little back
				seqs[dev] -= uint32(rapid.IntRange(0, 4).Draw(t, "back"))
			case 3: // far back: beyond the window
				seqs[dev] -= uint32(rapid.IntRange(60, 70).Draw(t, "far_back"))
			case 4: // a counter reset
				seqs[dev] = 0
			case 5: // a rejoin: a new session
				sessions[dev]++
				seqs[dev] = 0
			default:
				seqs[dev] += uint32(rapid.IntRange(1, 3).Draw(t, "ahead"))
			}
			if rapid.IntRange(0, 4).Draw(t, "silence") == 0 {
				at = at.Add(time.Duration(rapid.Int64Range(0, int64(2*frameMemory)).Draw(t, "silence_ns")))
			} else {
				at = at.Add(time.Duration(rapid.IntRange(0, 5000).Draw(t, "gap_ms")) * time.Millisecond)
			}
			frames = append(frames, frame{dev, sessions[dev], seqs[dev], at})
		}
		cut := rapid.IntRange(0, len(frames)).Draw(t, "cut")

		whole, _, _ := newLoRaReader(t)
		first, _, _ := newLoRaReader(t)
		for _, f := range frames[:cut] {
			first.frames.admit(f.dev, f.session, f.seq, f.at)
		}
		next, _, _ := newLoRaReader(t) // another seed: other shards
		if err := next.RestoreFrames(first.Frames()); err != nil {
			t.Fatal(err)
		}
		for i, f := range frames {
			want := whole.frames.admit(f.dev, f.session, f.seq, f.at)
			if i < cut {
				continue
			}
			if got := next.frames.admit(f.dev, f.session, f.seq, f.at); got != want {
				t.Fatalf("frame %d (%+v) after a hand-over at %d: admitted %v, want %v", i, f, cut, got, want)
			}
		}
	})
}

// Frame windows age on the instants ReadAt is given, not on the wall
// clock: a copy 5 minutes after its frame on a worker's stream clock is
// dropped, one 25 minutes after (a silent device, forgotten) is taken.
func TestFramesAgeOnTheGivenClock(t *testing.T) {
	const topic = "application/a/device/01/event/up"
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, after := range []time.Duration{5 * time.Minute, 25 * time.Minute} {
		r, _, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
		body := uplink("01", 9, 52.5, 13.4, at)
		if _, _, ingest, out := r.ReadAt(topic, body, "ns", at); out != Accepted || !ingest.Equal(at) {
			t.Fatalf("first copy: %v at %v", out, ingest)
		}
		_, _, _, out := r.ReadAt(topic, body, "ns", at.Add(after))
		if want := map[bool]Outcome{true: Ignored, false: Accepted}[after < frameMemory]; out != want {
			t.Errorf("a copy %v later: %v, want %v", after, out, want)
		}
	}
}

// Restored windows keep their sessions: session ids reduce to the same
// number in every reader.
func TestFramesRestoredKeepTheirSession(t *testing.T) {
	const topic = "application/a/device/01/event/up"
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r, _, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
	body := uplink("01", 9, 52.5, 13.4, at)
	if _, _, _, out := r.ReadAt(topic, body, "ns", at); out != Accepted {
		t.Fatalf("first copy: %v", out)
	}
	next, _, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
	if err := next.RestoreFrames(r.Frames()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, out := next.ReadAt(topic, body, "ns", at.Add(time.Second)); out != Ignored {
		t.Errorf("a copy after the restore: %v, want ignored as a duplicate", out)
	}
	twice, _, _ := newLoRaReader(t)
	if err := twice.RestoreFrames(append(r.Frames(), r.Frames()...)); err == nil {
		t.Error("a device twice restored without an error")
	}
}
