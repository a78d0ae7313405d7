package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// Errors of ParseRetained.
var (
	// ErrUnreadable: the payload is not the JSON of a transition.
	ErrUnreadable = errors.New("unreadable retained transition")
	// ErrNotTransition: the payload does not name the fence, device and
	// type its topic says, so it was not published by edgefence.
	ErrNotTransition = errors.New("retained message is not a transition")
)

// Retained is what a restart needs from a retained transition.
type Retained struct {
	Device  string
	Fence   string
	Type    engine.Type
	Event   int64     // event time, Unix ns (millisecond precision: the payload's ts)
	Decided time.Time // the server's wall clock at the decision; zero if absent
}

// retainedJSON is the subset of TransitionJSON's fields a restart reads.
type retainedJSON struct {
	Device      string    `json:"device"`
	Fence       string    `json:"fence"`
	Type        string    `json:"type"`
	Ts          int64     `json:"ts"`
	DecidedTime time.Time `json:"decided_time"`
}

// ParseRetained reads a retained message on <prefix>/<fence>/<device> back
// into the transition it records. The topic must agree with the payload:
// anything else under the prefix is not edgefence's.
func ParseRetained(prefix, topic string, payload []byte) (Retained, error) {
	var r retainedJSON
	if err := json.Unmarshal(payload, &r); err != nil {
		return Retained{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, topic, err)
	}
	typ, ok := engine.ParseType(r.Type)
	rest, under := strings.CutPrefix(topic, prefix+"/")
	fenceID, device, _ := strings.Cut(rest, "/")
	if !ok || !under || fenceID != r.Fence || device != r.Device {
		return Retained{}, fmt.Errorf("%w: %s", ErrNotTransition, topic)
	}
	return Retained{Device: device, Fence: fenceID, Type: typ, Event: r.Ts * 1e6, Decided: r.DecidedTime}, nil
}
