package output

import "github.com/edgefence/edgefence/ingest"

// MaxDeviceTopicLevel is the longest device id used as a topic level of the
// late and reject topics: the longest the ingest path accepts.
const MaxDeviceTopicLevel = ingest.MaxDeviceID

// TransitionTopic is where a transition is retained: <prefix>/<fence>/<device>.
func TransitionTopic(prefix, fence, device string) string {
	return prefix + "/" + fence + "/" + device
}

// LateTopic is where a late ping of device is reported: <base>/<device>.
func LateTopic(base, device string) string { return base + "/" + device }

// RejectTopic is where a rejected publish is reported: <base>/<device>, or
// the bare base when the device id itself is not a usable topic level
// (empty or too long), which is also why it was rejected.
func RejectTopic(base, device string) string {
	if device == "" || len(device) > MaxDeviceTopicLevel {
		return base
	}
	return base + "/" + device
}
