// Package subjects names what the workers of a cluster share in NATS —
// the streams, their subjects and headers, the lease and checkpoint
// buckets and their keys — and makes the servers' subject mappings that
// put each device in one partition (see docs/scale-out.md).
package subjects

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"

	"github.com/edgefence/edgefence/ingest"
)

// Names in the NATS account the workers use. The servers map telemetry
// subjects onto PingSubjectPrefix<n>.<subject>.
const (
	PingStream        = "EDGEFENCE_PINGS"
	PingSubjectPrefix = "edgefence.p."
	HistoryStream     = "EDGEFENCE_TRANSITIONS"
	HistoryPrefix     = "edgefence.history."
	LeaseBucket       = "edgefence-leases"
	// CheckpointStream holds the checkpoints and fence sets, chunked
	// (worker/checkpoint), on subjects under CheckpointPrefix.
	CheckpointStream = "EDGEFENCE_CHECKPOINTS"
	CheckpointPrefix = "edgefence.ckpt."
	// CheckpointBucket is the object store that held them before: a
	// worker reads what it finds there once (migration).
	CheckpointBucket = "edgefence-checkpoints"
	// RetainedStream is the NATS MQTT side's retained store.
	RetainedStream = "$MQTT_rmsgs"
	retainedPrefix = "$MQTT.rmsgs."
	tickToken      = "_tick"
	fenceToken     = "_fences"
	presencePrefix = "w."
	checkpointPfx  = "p-"
)

// Headers of a history record: its MQTT topic, whether it is retained,
// and the position in the partition's stream of the first output of the
// wave it was published in (wave.Pos), from which the next owner treats
// outputs as possibly recorded and not sent.
const (
	HeaderTopic  = "Edgefence-Topic"
	HeaderRetain = "Edgefence-Retain"
	HeaderWave   = "Edgefence-Wave"
)

// PingFilter is the ping stream filter of partition n's messages.
func PingFilter(n int) string { return PingSubjectPrefix + strconv.Itoa(n) + ".>" }

// Tick is the subject of partition n's ticks.
func Tick(n int) string { return PingSubjectPrefix + strconv.Itoa(n) + "." + tickToken }

// Fence is the subject of partition n's fence messages.
func Fence(n int) string { return PingSubjectPrefix + strconv.Itoa(n) + "." + fenceToken }

// History is the subject of partition n's history records.
func History(n int) string { return HistoryPrefix + strconv.Itoa(n) }

// Retained is the subject of an MQTT topic in the retained store.
func Retained(topic string) string { return retainedPrefix + topicToSubject(topic) }

// LeaseKey is partition n's key in the lease bucket.
func LeaseKey(n int) string { return "p." + strconv.Itoa(n) }

// PresenceKey is a worker's presence key in the lease bucket.
func PresenceKey(name string) string { return presencePrefix + name }

// PresenceName returns the worker name of a presence key; ok is false
// for any other key.
func PresenceName(key string) (name string, ok bool) { return strings.CutPrefix(key, presencePrefix) }

// CheckpointName is the name partition n's checkpoint is stored under.
func CheckpointName(n int) string { return checkpointPfx + strconv.Itoa(n) }

// CheckpointPartition returns the partition of a checkpoint's name; ok is false for any other name.
func CheckpointPartition(name string) (n int, ok bool) {
	if !strings.HasPrefix(name, checkpointPfx) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, checkpointPfx))
	return n, err == nil
}

// DefaultTelemetryFilters are the worker's telemetry topics when none
// are configured: serve's, LoRaWAN network servers' uplinks included,
// which the shipped nats.conf maps onto the partitions.
var DefaultTelemetryFilters = ingest.DefaultTelemetryFilters

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

// IsFence reports whether a ping stream subject is a partition's fence
// message (its data a fence version).
func IsFence(subject string) bool {
	rest := strings.TrimPrefix(subject, PingSubjectPrefix)
	i := strings.IndexByte(rest, '.')
	return i >= 0 && rest[i+1:] == fenceToken
}

// SplitPing returns the MQTT topic of a ping subject
// (edgefence.p.<n>.<subject>), or tick when it is a partition tick.
func SplitPing(subject string) (topic string, tick bool) {
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
func topicToSubject(t string) string { return subjectReplacer.Replace(t) }

// subjectReplacer is built once: building it allocates its tables, which
// on every ping was a tenth of a serve --cluster node's CPU.
var subjectReplacer = strings.NewReplacer("/", ".", ".", "//")

// ErrSubject is why a telemetry topic has no ping subject: a level that
// a NATS subject cannot carry (empty, or with a space, '*' or '>').
var ErrSubject = errors.New("the topic cannot be a NATS subject")

// PingSubject returns the ping stream subject of a publish on topic, the
// first of filters it matches: edgefence.p.<n>.<topic as a subject>, in
// the partition n of p that the servers' mapping (Mappings) would put it
// in — FNV-1a of the filter's device levels as subject tokens, mod p, as
// NATS's partition() hashes them — so that serve --cluster and NATS's
// MQTT side put a device in the same partition.
func PingSubject(filters []ingest.TelemetryFilter, topic string, p int) (string, error) {
	for i := range filters {
		if _, ok, _ := filters[i].Match(topic); ok {
			return pingSubject(&filters[i], topic, p)
		}
	}
	return "", fmt.Errorf("%w: %q matches no telemetry filter", ErrSubject, topic)
}

func pingSubject(tf *ingest.TelemetryFilter, topic string, p int) (string, error) {
	flevels := strings.Split(ingest.Unshare(tf.Filter), "/")
	tlevels := strings.Split(topic, "/")
	if len(flevels) != len(tlevels) {
		return "", fmt.Errorf("%w: %q", ErrSubject, topic)
	}
	var wild []int
	for i, l := range flevels {
		if l == "+" {
			wild = append(wild, i)
		}
	}
	if tf.Format.LoRaWAN() {
		wild = wild[len(wild)-1:]
	}
	for _, l := range tlevels {
		if l == "" || strings.ContainsAny(l, " \t\r\n*>") {
			return "", fmt.Errorf("%w: %q", ErrSubject, topic)
		}
	}
	h := fnv.New32a()
	for _, i := range wild {
		_, _ = io.WriteString(h, topicToSubject(tlevels[i]))
	}
	n := h.Sum32() % uint32(p)
	return PingSubjectPrefix + strconv.FormatUint(uint64(n), 10) + "." + topicToSubject(topic), nil
}
