package worker

import (
	"slices"
	"strconv"
	"strings"

	"github.com/edgefence/edgefence/ingest"
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
	fenceToken        = "_fences"
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
func fenceSubject(n int) string      { return PingSubjectPrefix + strconv.Itoa(n) + "." + fenceToken }
func historySubject(n int) string    { return historyPrefix + strconv.Itoa(n) }
func leaseKey(n int) string          { return "p." + strconv.Itoa(n) }
func presenceKey(name string) string { return "w." + name }
func checkpointName(n int) string    { return "p-" + strconv.Itoa(n) }

// DefaultTelemetryFilters are the worker's telemetry topics when none
// are configured: serve's, and the LoRaWAN network servers' uplinks
// (ChirpStack v4, The Things Stack v3), which the shipped nats.conf maps
// onto the partitions too.
var DefaultTelemetryFilters = append(slices.Clone(ingest.DefaultTelemetryFilters),
	"application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn")

// PartitionMappings returns the subject mappings the NATS servers need
// for the default telemetry topics and p partitions: devices/<id>/telemetry,
// owntracks/<user>/<device>, ChirpStack's and The Things Stack's uplinks,
// each device in one partition.
func PartitionMappings(p int) map[string]string {
	tf, err := ingest.ParseTelemetryFilters(DefaultTelemetryFilters)
	if err != nil {
		panic(err) // the defaults are constants
	}
	return Mappings(tf, p)
}

// Mappings returns the subject mapping (source → destination) that puts
// each filter's devices onto p partitions: NATS's MQTT side turns a topic
// into a subject ('/' → '.', a '.' in a level → "//"), and the mapping
// hashes the filter's device levels with partition(p, …). A device is a
// filter's '+' levels, all of them, as the topic's device id is; for a
// LoRaWAN filter it is the last one (ChirpStack's DevEUI, The Things
// Stack's device id; the first is the application), the level the
// uplink's default device id equals.
func Mappings(filters []ingest.TelemetryFilter, p int) map[string]string {
	out := make(map[string]string, len(filters))
	for _, tf := range filters {
		levels := strings.Split(tf.Filter, "/")
		if tf.Share != "" {
			levels = levels[2:] // $share/<group>/
		}
		var src, dst []string
		var wild []string
		for _, l := range levels {
			if l != "+" {
				src, dst = append(src, topicToSubject(l)), append(dst, topicToSubject(l))
				continue
			}
			wild = append(wild, strconv.Itoa(len(wild)+1))
			src, dst = append(src, "*"), append(dst, "{{wildcard("+wild[len(wild)-1]+")}}")
		}
		if tf.Format.LoRaWAN() {
			wild = wild[len(wild)-1:]
		}
		out[strings.Join(src, ".")] = PingSubjectPrefix + "{{partition(" + strconv.Itoa(p) + "," + strings.Join(wild, ",") + ")}}." + strings.Join(dst, ".")
	}
	return out
}

// isFenceMessage reports whether a ping stream subject is a partition's
// fence message (its data a fence version).
func isFenceMessage(subject string) bool {
	rest := strings.TrimPrefix(subject, PingSubjectPrefix)
	i := strings.IndexByte(rest, '.')
	return i >= 0 && rest[i+1:] == fenceToken
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
