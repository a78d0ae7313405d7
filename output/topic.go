package output

import "github.com/edgefence/edgefence/evaluator/engine"

// MaxDeviceTopicLevel is the longest device id used as a topic level of the
// late and reject topics: the longest the ingest path accepts. (It lives in
// package engine, which every output user has already, so that output does
// not import ingest.)
const MaxDeviceTopicLevel = engine.MaxDeviceID

// TransitionTopic is where a transition is retained: <prefix>/<fence>/<device>.
func TransitionTopic(prefix, fence, device string) string {
	return prefix + "/" + fence + "/" + device
}

// LateTopic is where a late ping of device is reported: <base>/<device>.
func LateTopic(base, device string) string { return base + "/" + device }

// RejectTopic is where a rejected publish is reported: <base>/<device>, or
// the bare base when the device id itself is not a usable topic level
// (empty, too long, or holding a separator, a wildcard or a control
// character), which is also why it was rejected.
func RejectTopic(base, device string) string {
	if !topicLevel(device) {
		return base
	}
	return base + "/" + device
}

// topicLevel reports whether id can stand as one level of a topic that
// dashboards subscribe to: 1 to MaxDeviceTopicLevel bytes, no '/', '+',
// '#' or control character (some clients drop their connection on one).
func topicLevel(id string) bool {
	if id == "" || len(id) > MaxDeviceTopicLevel {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c == 0x7f || c == '/' || c == '+' || c == '#' {
			return false
		}
	}
	return true
}
