package output

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// ErrImplausible: a retained transition the server stored that is not one
// its engine can have decided: unreadable, not a transition, or stamped
// outside the bounds the engine clamps every ping's stamp to.
var ErrImplausible = errors.New("implausible retained transition")

// CheckRetained is ParseRetained for a retained message the server itself
// stored, which must be a transition the engine can have decided, judged
// with the engine's own stamp bounds c at the server's time now: an event
// time that c would clamp (before the floor, a GPS week rollover, more
// than c.MaxAhead ahead of now), or a decision time before the floor,
// more than c.MaxAhead ahead of now or of which the event is more than
// c.MaxAhead ahead, is ErrImplausible. Restoring such a record would make
// every real ping of its device late until then, or lose its state.
func CheckRetained(prefix, topic string, payload []byte, c clock.Clamper, now time.Time) (Retained, error) {
	r, err := ParseRetained(prefix, topic, payload)
	if err != nil {
		return r, fmt.Errorf("%w: %w", ErrImplausible, err)
	}
	wall, ahead := now.UnixNano(), int64(c.MaxAhead)
	if _, why := c.Stamp(r.Event, true, wall); why.Clamped() {
		return r, fmt.Errorf("%w: %s: event time %s is %s (the engine clamps such a stamp; or this server's clock is wrong: %s)",
			ErrImplausible, topic, stamp(r.Event), clampWhy(why, c), now.UTC().Format(time.RFC3339))
	}
	if r.Decided.IsZero() {
		return r, nil // written by a version without decided_time
	}
	d := r.Decided.UnixNano()
	switch {
	case d < c.Floor:
		return r, fmt.Errorf("%w: %s: decided at %s, before the plausibility floor", ErrImplausible, topic, stamp(d))
	case d-wall > ahead:
		return r, fmt.Errorf("%w: %s: decided at %s, more than %s after this server's clock (%s)",
			ErrImplausible, topic, stamp(d), c.MaxAhead, now.UTC().Format(time.RFC3339))
	case r.Event-d > ahead:
		return r, fmt.Errorf("%w: %s: event time %s is more than %s after its decision at %s",
			ErrImplausible, topic, stamp(r.Event), c.MaxAhead, stamp(d))
	}
	return r, nil
}

// CheckStored is CheckRetained for a record of the retained-state store
// judged without the server's --transition-prefix (edgefence store check
// and repair): the prefix is the topic's but its last two levels.
func CheckStored(topic string, payload []byte, c clock.Clamper, now time.Time) error {
	prefix, ok := TransitionPrefix(topic)
	if !ok {
		return fmt.Errorf("%w: %s is not a transition topic", ErrImplausible, topic)
	}
	_, err := CheckRetained(prefix, topic, payload, c, now)
	return err
}

// TransitionPrefix is the prefix of a transition topic
// <prefix>/<fence>/<device>, and false for a topic of fewer levels.
func TransitionPrefix(topic string) (string, bool) {
	i := strings.LastIndexByte(topic, '/')
	if i < 0 {
		return "", false
	}
	j := strings.LastIndexByte(topic[:i], '/')
	if j <= 0 {
		return "", false
	}
	return topic[:j], true
}

func clampWhy(r clock.ClampReason, c clock.Clamper) string {
	switch r {
	case clock.ClampFuture:
		return fmt.Sprintf("more than --max-clock-offset (%s) ahead of this server's clock", c.MaxAhead)
	case clock.ClampBeforeFloor:
		return "before --min-valid-time"
	case clock.ClampWeekRollover:
		return "1024 GPS weeks behind this server's clock"
	}
	return r.String()
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339) }
