package evaluator

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// LoRaWAN codecs stamp whole seconds, so two uplinks of one device can
// tie: the frame counter then orders them, not their arrival. Frame 8
// (outside) arrives before frame 7 (inside) with the same stamp: the
// device was inside, then left, so ENTER then EXIT — arrival order
// would leave it inside. The transition carries the stamp's source.
func TestTiedStampsOrderedBySequenceNumber(t *testing.T) {
	h := newHarness(t, nil)
	at := t0.Add(time.Second).UnixNano()
	send := func(p pos, seq uint32, arrive time.Duration) {
		pp := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: at, HasTs: true, Seq: seq, HasSeq: true, Source: payload.SourceDevice}
		pg := engine.NewPing(h.cfg.Clamper(), "tracker-1", &pp, t0.Add(arrive))
		h.proc.Advance(t0.Add(arrive))
		h.proc.Ingest(&pg)
	}
	h.send("tracker-1", outside, 0, 0)
	send(outside, 8, ms(1100))
	send(inDepot, 7, ms(1200))
	h.at(3 * time.Second)
	h.want("tracker-1 depot ENTER +1s", "tracker-1 depot EXIT +1s")
	for _, tr := range h.rec.trans {
		if tr.Source != payload.SourceDevice {
			t.Fatalf("%s: source %v, want device", line(&tr), tr.Source)
		}
	}
}
