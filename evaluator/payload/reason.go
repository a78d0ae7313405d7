package payload

// Reason is why Decode produced no Position. It is a small enum that
// implements error, so the rejection path allocates nothing, callers can
// switch on it or use errors.Is, and its String is a bounded metric label.
type Reason uint8

const (
	// Ignored is an OwnTracks message whose _type is not "location"
	// (transition, waypoint, lwt, ...): not a fault, callers skip it
	// silently.
	Ignored Reason = iota
	// TooLarge is a payload longer than the Decoder's MaxSize.
	TooLarge
	// NotJSON is a payload that is not strict JSON, including an empty one.
	NotJSON
	// NotObject is valid JSON whose top level is not an object.
	NotObject
	// MissingLat is an object without lat, or with "lat":null.
	MissingLat
	// MissingLon is an object without lon, or with "lon":null.
	MissingLon
	// LatRange is a lat outside [-90, 90].
	LatRange
	// LonRange is a lon outside [-180, 180].
	LonRange
	// NotFinite is a number field that overflows float64, such as 1e999.
	NotFinite
	// WrongType is a known field holding the wrong JSON type, such as
	// "lat":"52.5" or "_type":7.
	WrongType
	// AccRange is a negative acc: an accuracy radius cannot be below zero.
	AccRange
	// DuplicateKey is a field the format reads given twice. JSON parsers
	// disagree on which copy wins, so guessing would let a payload mean
	// one thing here and another to any other reader of the topic.
	DuplicateKey
	// MissingType is an OwnTracks-format payload without a _type string,
	// or with "_type":null.
	MissingType
	// Uplink is a LoRaWAN network server's uplink (Format ChirpStack or
	// TTN, or Auto recognising one): not a fault, but not Decode's to
	// read; the caller hands it to package lorawan.
	Uplink

	numReasons
)

var reasonLabels = [numReasons]string{
	Ignored:      "ignored",
	TooLarge:     "too_large",
	NotJSON:      "not_json",
	NotObject:    "not_object",
	MissingLat:   "missing_lat",
	MissingLon:   "missing_lon",
	LatRange:     "lat_range",
	LonRange:     "lon_range",
	NotFinite:    "not_finite",
	WrongType:    "wrong_type",
	AccRange:     "acc_range",
	DuplicateKey: "duplicate_key",
	MissingType:  "missing_type",
	Uplink:       "uplink",
}

var reasonMessages = [numReasons]string{
	Ignored:      "payload: owntracks message is not a location",
	TooLarge:     "payload: larger than the size limit",
	NotJSON:      "payload: not valid JSON",
	NotObject:    "payload: not a JSON object",
	MissingLat:   "payload: lat missing",
	MissingLon:   "payload: lon missing",
	LatRange:     "payload: lat outside [-90, 90]",
	LonRange:     "payload: lon outside [-180, 180]",
	NotFinite:    "payload: number is not finite",
	WrongType:    "payload: field has the wrong JSON type",
	AccRange:     "payload: acc is negative",
	DuplicateKey: "payload: field given more than once",
	MissingType:  "payload: owntracks _type missing",
	Uplink:       "payload: a LoRaWAN uplink, for package lorawan",
}

// Error returns a human message naming the problem, e.g.
// "payload: lat outside [-90, 90]".
func (r Reason) Error() string {
	if r < numReasons {
		return reasonMessages[r]
	}
	return "payload: unknown reason"
}

// String returns r's short snake_case label, e.g. "lat_range", for metric
// labels and reject messages.
func (r Reason) String() string {
	if r < numReasons {
		return reasonLabels[r]
	}
	return "unknown"
}

// Reasons returns every Reason that rejects a payload (all but Ignored
// and Uplink), in declaration order, so callers can pre-create one counter
// per label. The slice is fresh and theirs to keep.
func Reasons() []Reason {
	rs := make([]Reason, 0, numReasons-2)
	for r := Ignored + 1; r < numReasons; r++ {
		if r != Uplink {
			rs = append(rs, r)
		}
	}
	return rs
}

// NumReasons is one more than the largest Reason: callers indexing
// arrays by Reason number their own reasons from it.
const NumReasons = int(numReasons)
