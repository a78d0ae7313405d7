package payload

import (
	"fmt"
	"strconv"
)

// Format selects how a payload is read.
type Format uint8

const (
	// Auto reads a payload as OwnTracks when its object has a "_type" key
	// and as Canonical otherwise, so one topic can carry both.
	Auto Format = iota
	// Canonical is edgefence's own body:
	// {"lat":52.52,"lon":13.40,"ts":1764547200123,"acc":8.5}, ts in epoch
	// milliseconds.
	Canonical
	// OwnTracks is the OwnTracks app's message:
	// {"_type":"location","lat":..,"lon":..,"tst":<epoch seconds>,"acc":..}.
	OwnTracks
)

var formatNames = [...]string{Auto: "auto", Canonical: "canonical", OwnTracks: "owntracks"}

// ParseFormat returns the Format named s ("auto", "canonical" or
// "owntracks"), as written in config flags.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if s == name {
			return Format(f), nil
		}
	}
	return Auto, fmt.Errorf("payload: unknown format %q (want auto, canonical or owntracks)", s)
}

// String returns the name ParseFormat accepts for f.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}
