package payload

import (
	"fmt"
	"strconv"
)

// Format selects how a payload is read.
type Format uint8

const (
	// Auto reads a payload as OwnTracks when its object has a "_type" key,
	// as a LoRaWAN uplink (ChirpStack or TTN) when it has a "deviceInfo",
	// "devEUI" or "end_device_ids" key and no "lat" or "lon", and as Canonical
	// otherwise, so one topic can carry all of them.
	Auto Format = iota
	// Canonical is edgefence's own body:
	// {"lat":52.52,"lon":13.40,"ts":1764547200123,"acc":8.5}, ts in epoch
	// milliseconds.
	Canonical
	// OwnTracks is the OwnTracks app's message:
	// {"_type":"location","lat":..,"lon":..,"tst":<epoch seconds>,"acc":..}.
	OwnTracks
	// ChirpStack is a ChirpStack v4 integration's uplink event
	// (application/<app>/device/<devEUI>/event/up), decoded by package
	// lorawan.
	ChirpStack
	// TTN is a The Things Stack v3 uplink (v3/<app>@<tenant>/devices/<device>/up),
	// decoded by package lorawan.
	TTN
)

var formatNames = [...]string{Auto: "auto", Canonical: "canonical", OwnTracks: "owntracks", ChirpStack: "chirpstack", TTN: "ttn"}

// ParseFormat returns the Format named s ("auto", "canonical",
// "owntracks", "chirpstack" or "ttn"), as written in config flags.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if s == name {
			return Format(f), nil
		}
	}
	return Auto, fmt.Errorf("payload: unknown format %q (want auto, canonical, owntracks, chirpstack or ttn)", s)
}

// LoRaWAN reports whether f is a network server's uplink format, which
// package lorawan decodes rather than Decode.
func (f Format) LoRaWAN() bool { return f == ChirpStack || f == TTN }

// String returns the name ParseFormat accepts for f.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}
