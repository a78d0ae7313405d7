package fleet

import (
	"cmp"
	"slices"
)

// score is how an emitted transition log compares with the ground truth.
type score struct {
	truth, emitted, matched int64
}

// align matches emitted transitions to true ones per fence: a pair
// matches when the type is the same and the emitted transition's causing
// ping was fixed at most early before the true change (clock faults can
// reorder a little) and at most late after it (a correct transition that
// late pings or an outage delayed is still correct, not a phantom).
// Within a fence the longest order-preserving matching is taken, so a
// phantom EXIT + ENTER pair inside a true stay is two phantoms and nothing
// else. Both inputs are reordered in place (by fence, stably), and the
// transitions of one longest matching are marked matched.
func align(truth, emitted []event, early, late int64, dp []int32) (score, []int32) {
	sc := score{truth: int64(len(truth)), emitted: int64(len(emitted))}
	byFence := func(a, b event) int { return cmp.Compare(a.fence, b.fence) }
	slices.SortStableFunc(truth, byFence)
	slices.SortStableFunc(emitted, byFence)
	for i, j := 0, 0; i < len(truth) && j < len(emitted); {
		switch c := cmp.Compare(truth[i].fence, emitted[j].fence); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			i2, j2 := i, j
			for i2 < len(truth) && truth[i2].fence == truth[i].fence {
				i2++
			}
			for j2 < len(emitted) && emitted[j2].fence == emitted[j].fence {
				j2++
			}
			var m int64
			m, dp = lcs(truth[i:i2], emitted[j:j2], early, late, dp)
			sc.matched += m
			i, j = i2, j2
		}
	}
	return sc, dp
}

// lcs is the longest common subsequence of two short transition logs
// under the matching rule; it marks the pairs of one such subsequence.
func lcs(a, b []event, early, late int64, dp []int32) (int64, []int32) {
	w := len(b) + 1
	need := (len(a) + 1) * w
	if cap(dp) < need {
		dp = make([]int32, need)
	}
	dp = dp[:need]
	clear(dp[:w])
	for i := 1; i <= len(a); i++ {
		dp[i*w] = 0
		for j := 1; j <= len(b); j++ {
			best := max(dp[(i-1)*w+j], dp[i*w+j-1])
			if pairs(&a[i-1], &b[j-1], early, late) {
				best = max(best, dp[(i-1)*w+j-1]+1)
			}
			dp[i*w+j] = best
		}
	}
	for i, j := len(a), len(b); i > 0 && j > 0; {
		switch {
		case pairs(&a[i-1], &b[j-1], early, late) && dp[i*w+j] == dp[(i-1)*w+j-1]+1:
			a[i-1].matched, b[j-1].matched = true, true
			i, j = i-1, j-1
		case dp[i*w+j] == dp[(i-1)*w+j]:
			i--
		default:
			j--
		}
	}
	return int64(dp[len(a)*w+len(b)]), dp
}

// pairs is the matching rule: the same type, and the emitted transition's
// causing fix at most early before and late after the true change.
func pairs(x, y *event, early, late int64) bool {
	return x.typ == y.typ && y.at >= x.at-early && y.at <= x.at+late
}

// placeHistoric puts historic transitions where they happened among the
// live ones: a historic transition is published after newer live ones,
// and the alignment reads each fence's transitions in order. Live
// transitions keep the order they were published in; each historic one
// goes before the first live one that happened after it.
func placeHistoric(live, past []event, buf *[]event) []event {
	if len(past) == 0 {
		return append((*buf)[:0], live...)
	}
	slices.SortStableFunc(past, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	out := (*buf)[:0]
	i := 0
	for _, e := range live {
		for i < len(past) && past[i].at < e.at {
			out = append(out, past[i])
			i++
		}
		out = append(out, e)
	}
	out = append(out, past[i:]...)
	*buf = out
	return out
}
