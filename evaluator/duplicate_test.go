package evaluator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"pgregory.net/rapid"
)

// A QoS 1 ping can be delivered twice: the broker resends what a
// subscriber had not acknowledged when its connection dropped (edgefence
// bridge after a crash or a reconnect). With a hold, a redelivered ping
// changes no transition: a copy of one of the device's last RecentPings
// pings (its stamp as sent and position) is dropped before anything
// weighs it. What may move is an instant: a live transition
// stands for the last of its kind that late pings reveal (see mergeRun),
// and which pings came late differs with the copies. So each fence's
// transitions are compared in event order, by kind. (Given distinct
// stamps per device and no buffer overflow; a copy that overflows a full
// buffer releases another ping early.)
func TestPropertyRedeliveredPingsChangeNoTransition(t *testing.T) {
	bigBuffer := func(c *engine.Config) { c.BufferCap = 1000 }
	rapid.Check(t, func(t *rapid.T) {
		s := stream(t, 2*time.Second)
		want := withoutInstants(feedThrough(newHarness(t, bigBuffer), s))
		type copyOf struct {
			sent
			of int // the original's index in s; -1: an original
		}
		all := make([]copyOf, 0, 2*len(s))
		for i, x := range s {
			all = append(all, copyOf{x, -1})
			if rapid.Bool().Draw(t, "redelivered") {
				x.arrive += ms(rapid.IntRange(0, 5000).Draw(t, "again_after_ms"))
				all = append(all, copyOf{x, i})
			}
		}
		// The engine knows a device's last RecentPings pings: a copy
		// that comes later than that is a new ping to it (the contract).
		slices.SortStableFunc(all, func(a, b copyOf) int { return cmp.Compare(a.arrive, b.arrive) })
		index := map[sent]int{}
		for i, x := range s {
			index[x] = i
		}
		recent := map[string][]int{}
		var redelivered []sent
		for _, x := range all {
			if x.of < 0 {
				r := append(recent[x.dev], index[x.sent])
				recent[x.dev] = r[max(0, len(r)-reorder.RecentPings):]
				redelivered = append(redelivered, x.sent)
			} else if slices.Contains(recent[x.dev], x.of) {
				redelivered = append(redelivered, x.sent)
			}
		}
		if got := withoutInstants(feedThrough(newHarness(t, bigBuffer), redelivered)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("with redelivered pings:\n got  %v\n want %v", got, want)
		}
	})
}

// feedThrough is feed with time advanced as a shard's timer advances it:
// through every deadline in turn, not past several at once.
func feedThrough(h *harness, s []sent) map[string][]string {
	s = slices.Clone(s)
	slices.SortStableFunc(s, func(a, b sent) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, x := range s {
		h.proc.AdvanceThrough(t0.Add(x.arrive))
		h.send(x.dev, x.p, x.event, x.arrive)
	}
	h.proc.AdvanceThrough(t0.Add(time.Hour))
	h.proc.Flush(t0.Add(time.Hour))
	return timeline(h.rec.trans)
}

// withoutInstants drops the instants from transition lines ("device
// fence TYPE +t"), keeping each fence's in event order.
func withoutInstants(m map[string][]string) map[string][]string {
	for _, lines := range m {
		for i, l := range lines {
			lines[i] = l[:strings.LastIndexByte(l, ' ')]
		}
		slices.SortStableFunc(lines, func(a, b string) int {
			return strings.Compare(strings.Fields(a)[1], strings.Fields(b)[1])
		})
	}
	return m
}

// Without a hold nothing is late, so a redelivered ping that arrives after
// a later one is evaluated again, out of order: a phantom pair, and the
// phantom stay's DWELL.
func TestRedeliveredPingWithoutHoldInventsTransitions(t *testing.T) {
	for _, hold := range []time.Duration{0, engine.DefaultHold} {
		h := newHarness(t, func(c *engine.Config) { c.Hold = hold })
		h.send("dev", inDepot, 0, 0)
		h.send("dev", outside, ms(1000), ms(1000))
		h.send("dev", inDepot, 0, ms(2000)) // the first ping again
		h.at(time.Hour)
		h.proc.Flush(t0.Add(time.Hour))
		want := []string{"dev depot ENTER +0s", "dev depot EXIT +1s"}
		if hold == 0 {
			want = append(want, "dev depot ENTER +0s", "dev depot DWELL +5m0s")
		}
		if got := h.rec.lines(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("hold %v: %q, want %q", hold, got, want)
		}
	}
}
