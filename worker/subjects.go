package worker

import (
	"strconv"
	"strings"
)

// Names in the NATS account the worker uses. The servers map telemetry
// subjects onto PingSubjectPrefix<n>.<subject> (see docs/scale-out.md).
const (
	PingStream        = "EDGEFENCE_PINGS"
	PingSubjectPrefix = "edgefence.p."
	HistoryStream     = "EDGEFENCE_TRANSITIONS"
	historyPrefix     = "edgefence.history."
	LeaseBucket       = "edgefence-leases"
	CheckpointBucket  = "edgefence-checkpoints"
	tickToken         = "_tick"
	retainedStream    = "$MQTT_rmsgs"
	retainedPrefix    = "$MQTT.rmsgs."
)

// Headers of a history record.
const (
	HeaderTopic  = "Edgefence-Topic"
	HeaderRetain = "Edgefence-Retain"
)

func pingFilter(n int) string        { return PingSubjectPrefix + strconv.Itoa(n) + ".>" }
func tickSubject(n int) string       { return PingSubjectPrefix + strconv.Itoa(n) + "." + tickToken }
func historySubject(n int) string    { return historyPrefix + strconv.Itoa(n) }
func leaseKey(n int) string          { return "p." + strconv.Itoa(n) }
func presenceKey(name string) string { return "w." + name }
func checkpointName(n int) string    { return "p-" + strconv.Itoa(n) }

// PartitionMappings returns the subject mappings the NATS servers need
// for the default telemetry topics and p partitions: devices/<id>/telemetry
// and owntracks/<user>/<device>, each device in one partition.
func PartitionMappings(p int) map[string]string {
	ps := strconv.Itoa(p)
	return map[string]string{
		"devices.*.telemetry": PingSubjectPrefix + "{{partition(" + ps + ",1)}}.devices.{{wildcard(1)}}.telemetry",
		"owntracks.*.*":       PingSubjectPrefix + "{{partition(" + ps + ",1,2)}}.owntracks.{{wildcard(1)}}.{{wildcard(2)}}",
	}
}

// splitPing returns the MQTT topic of a ping subject
// (edgefence.p.<n>.<subject>), or tick when it is a partition tick.
func splitPing(subject string) (topic string, tick bool) {
	rest := strings.TrimPrefix(subject, PingSubjectPrefix)
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	if rest == tickToken {
		return "", true
	}
	return subjectToTopic(rest), false
}

// subjectToTopic reverses the NATS MQTT topic mapping: '.' separates
// levels, and a '.' inside a level travels as "//".
func subjectToTopic(s string) string {
	s = strings.ReplaceAll(s, "//", "\x00")
	s = strings.ReplaceAll(s, ".", "/")
	return strings.ReplaceAll(s, "\x00", ".")
}

// topicToSubject is the NATS MQTT mapping of a topic with no empty level.
func topicToSubject(t string) string {
	return strings.NewReplacer("/", ".", ".", "//").Replace(t)
}
