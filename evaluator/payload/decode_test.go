package payload_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

type decodeCase struct {
	name   string
	format payload.Format
	in     string
	want   payload.Position
	err    error
}

func pos(lat, lon float64) payload.Position { return payload.Position{Lat: lat, Lon: lon} }

func withTs(p payload.Position, ns int64) payload.Position {
	p.TsNs, p.HasTs = ns, true
	return p
}

func withAcc(p payload.Position, acc float64) payload.Position {
	p.Acc, p.HasAcc = acc, true
	return p
}

var canonicalCases = []decodeCase{
	{"tracker sends full canonical ping: every field decoded", payload.Canonical,
		`{"lat":52.52,"lon":13.40,"ts":1764547200123,"acc":8.5}`,
		withAcc(withTs(pos(52.52, 13.40), 1764547200123000000), 8.5), nil},
	{"tracker without clock sends no ts: decoded, HasTs false", payload.Canonical,
		`{"lat":52.52,"lon":13.4}`, pos(52.52, 13.4), nil},
	{"tracker sends ts null: same as no ts", payload.Canonical,
		`{"lat":52.52,"lon":13.4,"ts":null}`, pos(52.52, 13.4), nil},
	{"tracker sends sub-millisecond float ts: fraction kept as ns", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1764547200123.5}`, withTs(pos(1, 2), 1764547200123500000), nil},
	{"tracker sends integral ts in exponent form: ns exact", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1.764547200123e12}`, withTs(pos(1, 2), 1764547200123000000), nil},
	{"tracker sends ts 0 (clock unset): decoded as the epoch, not absent", payload.Canonical,
		`{"lat":1,"lon":2,"ts":0}`, withTs(pos(1, 2), 0), nil},
	{"tracker with clock before 1970 sends negative ts: decoded", payload.Canonical,
		`{"lat":1,"lon":2,"ts":-1500.25}`, withTs(pos(1, 2), -1500250000), nil},
	{"tracker sends ts at the last whole ms that fits: exact", payload.Canonical,
		`{"lat":1,"lon":2,"ts":9223372036854}`, withTs(pos(1, 2), 9223372036854000000), nil},
	{"tracker sends ts just past int64 ns: saturates high", payload.Canonical,
		`{"lat":1,"lon":2,"ts":9223372036854.9}`, withTs(pos(1, 2), math.MaxInt64), nil},
	{"tracker sends ts of max int64 ms: saturates high", payload.Canonical,
		`{"lat":1,"lon":2,"ts":9223372036854775807}`, withTs(pos(1, 2), math.MaxInt64), nil},
	{"tracker sends absurd future ts 1e300: saturates high, not an error", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1e300}`, withTs(pos(1, 2), math.MaxInt64), nil},
	{"tracker sends absurd past ts: saturates low, not an error", payload.Canonical,
		`{"lat":1,"lon":2,"ts":-99999999999999999999}`, withTs(pos(1, 2), math.MinInt64), nil},
	{"tracker sends ts just below int64 ns: saturates low", payload.Canonical,
		`{"lat":1,"lon":2,"ts":-9223372036854.9}`, withTs(pos(1, 2), math.MinInt64), nil},
	{"tracker sends ts 1e999: NotFinite", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1e999}`, payload.Position{}, payload.NotFinite},
	{"tracker sends ts as a string: WrongType", payload.Canonical,
		`{"lat":1,"lon":2,"ts":"1764547200123"}`, payload.Position{}, payload.WrongType},

	{"tracker without fix quality omits acc: HasAcc false", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1}`, withTs(pos(1, 2), 1e6), nil},
	{"tracker sends acc null: same as no acc", payload.Canonical,
		`{"lat":1,"lon":2,"acc":null}`, pos(1, 2), nil},
	{"tracker sends perfect acc 0: accepted", payload.Canonical,
		`{"lat":1,"lon":2,"acc":0}`, withAcc(pos(1, 2), 0), nil},
	{"tracker sends integer acc: decoded", payload.Canonical,
		`{"lat":1,"lon":2,"acc":25}`, withAcc(pos(1, 2), 25), nil},
	{"tracker sends negative acc: AccRange", payload.Canonical,
		`{"lat":1,"lon":2,"acc":-0.5}`, payload.Position{}, payload.AccRange},
	{"tracker sends acc 1e999: NotFinite", payload.Canonical,
		`{"lat":1,"lon":2,"acc":1e999}`, payload.Position{}, payload.NotFinite},
	{"tracker sends acc as an object: WrongType", payload.Canonical,
		`{"lat":1,"lon":2,"acc":{"h":5}}`, payload.Position{}, payload.WrongType},

	{"tracker sends extra telemetry: unknown fields ignored", payload.Canonical,
		`{"batt":87,"lat":1,"alt":34.5,"lon":2,"meta":{"lat":"x","ts":[1,2]},"ok":true,"n":null}`, pos(1, 2), nil},
	{"tracker escapes a key: l\\u0061t is lat", payload.Canonical,
		`{"l\u0061t":1,"lon":2}`, pos(1, 2), nil},
	{"tracker pads with whitespace: decoded", payload.Canonical,
		" \r\n\t{ \"lat\" : 1 ,\n\"lon\":2 } \n", pos(1, 2), nil},
	{"tracker sends lat exactly 90: accepted", payload.Canonical,
		`{"lat":90,"lon":0}`, pos(90, 0), nil},
	{"tracker sends lat exactly -90: accepted", payload.Canonical,
		`{"lat":-90,"lon":0}`, pos(-90, 0), nil},
	{"tracker sends lon exactly -180: accepted", payload.Canonical,
		`{"lat":0,"lon":-180.0}`, pos(0, -180), nil},
	{"tracker sends lon exactly 180: accepted", payload.Canonical,
		`{"lat":0,"lon":180}`, pos(0, 180), nil},
	{"tracker sends lat 90.0001: LatRange", payload.Canonical,
		`{"lat":90.0001,"lon":0}`, payload.Position{}, payload.LatRange},
	{"tracker sends lat -90.0001: LatRange", payload.Canonical,
		`{"lat":-90.0001,"lon":0}`, payload.Position{}, payload.LatRange},
	{"tracker sends lon 180.0001: LonRange", payload.Canonical,
		`{"lat":0,"lon":180.0001}`, payload.Position{}, payload.LonRange},
	{"tracker sends lon -180.0001: LonRange", payload.Canonical,
		`{"lat":0,"lon":-180.0001}`, payload.Position{}, payload.LonRange},
	{"tracker sends microdegree lat in exponent form: decoded exactly", payload.Canonical,
		`{"lat":1.5e-07,"lon":-2E-6}`, pos(1.5e-07, -2e-6), nil},
	{"tracker sends lat underflowing float64: reads as 0", payload.Canonical,
		`{"lat":1e-400,"lon":2}`, pos(0, 2), nil},
	{"tracker sends lat 1e999: NotFinite", payload.Canonical,
		`{"lat":1e999,"lon":2}`, payload.Position{}, payload.NotFinite},
	{"tracker sends lon -1e999: NotFinite", payload.Canonical,
		`{"lat":1,"lon":-1e999}`, payload.Position{}, payload.NotFinite},
	{"tracker forgets lat: MissingLat", payload.Canonical,
		`{"lon":2,"ts":1}`, payload.Position{}, payload.MissingLat},
	{"tracker forgets lon: MissingLon", payload.Canonical,
		`{"lat":1}`, payload.Position{}, payload.MissingLon},
	{"tracker without fix sends lat null: MissingLat", payload.Canonical,
		`{"lat":null,"lon":null}`, payload.Position{}, payload.MissingLat},
	{"tracker sends lon null: MissingLon", payload.Canonical,
		`{"lat":1,"lon":null}`, payload.Position{}, payload.MissingLon},
	{"tracker sends an empty object: MissingLat", payload.Canonical,
		`{}`, payload.Position{}, payload.MissingLat},
	{"tracker quotes lat: WrongType", payload.Canonical,
		`{"lat":"52.5","lon":13.4}`, payload.Position{}, payload.WrongType},
	{"tracker sends lon as bool: WrongType", payload.Canonical,
		`{"lat":1,"lon":true}`, payload.Position{}, payload.WrongType},
	{"tracker sends lat as an array: WrongType", payload.Canonical,
		`{"lat":[52.5],"lon":13.4}`, payload.Position{}, payload.WrongType},
	{"tracker repeats lat: DuplicateKey, no guessing which wins", payload.Canonical,
		`{"lat":1,"lon":2,"lat":3}`, payload.Position{}, payload.DuplicateKey},
	{"tracker repeats lat via an escaped key: DuplicateKey", payload.Canonical,
		`{"lat":1,"lon":2,"l\u0061t":3}`, payload.Position{}, payload.DuplicateKey},
	{"tracker repeats ts: DuplicateKey", payload.Canonical,
		`{"lat":1,"lon":2,"ts":1,"ts":2}`, payload.Position{}, payload.DuplicateKey},
	{"tracker repeats an unknown field: ignored", payload.Canonical,
		`{"lat":1,"lon":2,"x":1,"x":2}`, pos(1, 2), nil},
	{"tracker sends bad lat and no lon: lat reported first", payload.Canonical,
		`{"lat":"x"}`, payload.Position{}, payload.WrongType},
	{"tracker sends bad lon and bad acc: lon reported first", payload.Canonical,
		`{"lat":1,"lon":200,"acc":-1}`, payload.Position{}, payload.LonRange},
}

var syntaxCases = []decodeCase{
	{"tracker sends an empty payload: NotJSON", payload.Auto, ``, payload.Position{}, payload.NotJSON},
	{"tracker sends only whitespace: NotJSON", payload.Auto, " \n", payload.Position{}, payload.NotJSON},
	{"tracker sends NMEA text: NotJSON", payload.Auto,
		`$GPGGA,123519,4807.038,N,01131.000,E`, payload.Position{}, payload.NotJSON},
	{"tracker sends truncated JSON: NotJSON", payload.Auto, `{"lat":1,"lon":2`, payload.Position{}, payload.NotJSON},
	{"tracker appends garbage: NotJSON", payload.Auto, `{"lat":1,"lon":2}x`, payload.Position{}, payload.NotJSON},
	{"tracker sends two objects: NotJSON", payload.Auto, `{"lat":1,"lon":2}{}`, payload.Position{}, payload.NotJSON},
	{"tracker sends NaN literal: NotJSON, strict JSON has none", payload.Auto,
		`{"lat":NaN,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"tracker sends Infinity literal: NotJSON", payload.Auto,
		`{"lat":1,"lon":-Infinity}`, payload.Position{}, payload.NotJSON},
	{"tracker sends malformed number 1.2.3: NotJSON", payload.Auto,
		`{"lat":1.2.3,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"tracker sends leading-zero number: NotJSON", payload.Auto,
		`{"lat":052.5,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"tracker sends plus-signed number: NotJSON", payload.Auto,
		`{"lat":+52.5,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"tracker sends bare-dot number: NotJSON", payload.Auto,
		`{"lat":.5,"lon":2}`, payload.Position{}, payload.NotJSON},
	{"tracker sends bad escape in an unknown field: NotJSON", payload.Auto,
		`{"lat":1,"lon":2,"name":"a\qb"}`, payload.Position{}, payload.NotJSON},
	{"tracker sends raw control char in a string: NotJSON", payload.Auto,
		"{\"lat\":1,\"lon\":2,\"name\":\"a\x01b\"}", payload.Position{}, payload.NotJSON},
	{"tracker sends raw control char before an escape in a key: NotJSON", payload.Auto,
		"{\"\x03\\b\":0,\"lat\":1,\"lon\":2}", payload.Position{}, payload.NotJSON},
	{"tracker sends raw tab before an escape in a value: NotJSON", payload.Auto,
		"{\"lat\":1,\"lon\":2,\"name\":\"a\tb\\\"c\"}", payload.Position{}, payload.NotJSON},
	{"tracker sends escaped control chars: valid JSON, decoded", payload.Auto,
		`{"lat":1,"lon":2,"name":"a\tb\u0001\"c\\"}`, pos(1, 2), nil},
	{"tracker sends single-quoted keys: NotJSON", payload.Auto, `{'lat':1,'lon':2}`, payload.Position{}, payload.NotJSON},
	{"tracker nests deeper than the parser allows: NotJSON", payload.Auto,
		`{"lat":1,"lon":2,"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
		payload.Position{}, payload.NotJSON},
	{"tracker sends a JSON array: NotObject", payload.Auto,
		`[{"lat":1,"lon":2}]`, payload.Position{}, payload.NotObject},
	{"tracker sends a JSON string: NotObject", payload.Auto, `"52.5,13.4"`, payload.Position{}, payload.NotObject},
	{"tracker sends a bare number: NotObject", payload.Auto, `52.5`, payload.Position{}, payload.NotObject},
	{"tracker sends null: NotObject", payload.Auto, `null`, payload.Position{}, payload.NotObject},
}

var ownTracksCases = []decodeCase{
	{"OwnTracks phone sends a location: tst seconds become ns", payload.OwnTracks,
		`{"_type":"location","tid":"ab","lat":52.52,"lon":13.4,"tst":1764547200,"acc":12,"batt":80,"conn":"w"}`,
		withAcc(withTs(pos(52.52, 13.4), 1764547200000000000), 12), nil},
	{"OwnTracks phone sends fractional tst: fraction kept", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2,"tst":1764547200.5}`, withTs(pos(1, 2), 1764547200500000000), nil},
	{"OwnTracks phone omits tst: HasTs false", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2}`, pos(1, 2), nil},
	{"OwnTracks location carries a canonical ts: ignored, only tst counts", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2,"ts":5}`, pos(1, 2), nil},
	{"OwnTracks phone sends absurd tst: saturates high", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2,"tst":9223372037}`, withTs(pos(1, 2), math.MaxInt64), nil},
	{"OwnTracks phone escapes the _type value: still a location", payload.OwnTracks,
		`{"_type":"loc\u0061tion","lat":1,"lon":2}`, pos(1, 2), nil},
	{"OwnTracks phone sends a region transition: Ignored", payload.OwnTracks,
		`{"_type":"transition","event":"enter","lat":1,"lon":2,"tst":1}`, payload.Position{}, payload.Ignored},
	{"OwnTracks phone sends a waypoint: Ignored", payload.OwnTracks,
		`{"_type":"waypoint","desc":"home","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"OwnTracks broker publishes last will: Ignored", payload.OwnTracks,
		`{"_type":"lwt","tst":1764547200}`, payload.Position{}, payload.Ignored},
	{"OwnTracks transition with junk coordinates: Ignored before fields are read", payload.OwnTracks,
		`{"_type":"transition","lat":"x","lon":999}`, payload.Position{}, payload.Ignored},
	{"OwnTracks _type in other case: not a location, Ignored", payload.OwnTracks,
		`{"_type":"Location","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"OwnTracks-format message without _type: MissingType", payload.OwnTracks,
		`{"lat":1,"lon":2,"tst":1}`, payload.Position{}, payload.MissingType},
	{"OwnTracks message with _type null: MissingType", payload.OwnTracks,
		`{"_type":null,"lat":1,"lon":2}`, payload.Position{}, payload.MissingType},
	{"OwnTracks message with numeric _type: WrongType", payload.OwnTracks,
		`{"_type":7,"lat":1,"lon":2}`, payload.Position{}, payload.WrongType},
	{"OwnTracks message repeating _type: DuplicateKey", payload.OwnTracks,
		`{"_type":"lwt","_type":"location","lat":1,"lon":2}`, payload.Position{}, payload.DuplicateKey},
	{"OwnTracks location without lat: MissingLat", payload.OwnTracks,
		`{"_type":"location","lon":2}`, payload.Position{}, payload.MissingLat},
	{"OwnTracks location with tst as string: WrongType", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2,"tst":"1764547200"}`, payload.Position{}, payload.WrongType},
	{"OwnTracks location with negative acc: AccRange", payload.OwnTracks,
		`{"_type":"location","lat":1,"lon":2,"acc":-3}`, payload.Position{}, payload.AccRange},
	{"OwnTracks location with lat out of range: LatRange", payload.OwnTracks,
		`{"_type":"location","lat":91,"lon":2}`, payload.Position{}, payload.LatRange},
}

var autoCases = []decodeCase{
	{"auto: ChirpStack uplink recognised by deviceInfo: Uplink", payload.Auto,
		`{"deviceInfo":{"devEui":"01"},"fCnt":1,"object":{"lat":1,"lon":2}}`, payload.Position{}, payload.Uplink},
	{"auto: TTS uplink recognised by end_device_ids, escaped: Uplink", payload.Auto,
		`{"end_device_\u0069ds":{"device_id":"d"},"uplink_message":{}}`, payload.Position{}, payload.Uplink},
	{"auto: a canonical ping with a deviceInfo field stays canonical", payload.Auto,
		`{"lat":1,"lon":2,"deviceInfo":{}}`, pos(1, 2), nil},
	{"canonical forced: deviceInfo is just an unknown field", payload.Canonical,
		`{"deviceInfo":{}}`, payload.Position{}, payload.MissingLat},
	{"chirpstack: not Decode's, once it is JSON", payload.ChirpStack, `{"lat":1,"lon":2}`, payload.Position{}, payload.Uplink},
	{"ttn: invalid JSON is still NotJSON", payload.TTN, `{"end_device_ids":`, payload.Position{}, payload.NotJSON},
	{"auto: OwnTracks location recognised by _type, tst in seconds", payload.Auto,
		`{"_type":"location","lat":1,"lon":2,"tst":10}`, withTs(pos(1, 2), 10e9), nil},
	{"auto: OwnTracks transition recognised by _type: Ignored", payload.Auto,
		`{"_type":"transition","lat":1,"lon":2}`, payload.Position{}, payload.Ignored},
	{"auto: OwnTracks lwt: Ignored", payload.Auto, `{"_type":"lwt"}`, payload.Position{}, payload.Ignored},
	{"auto: canonical ping has no _type, ts in milliseconds", payload.Auto,
		`{"lat":1,"lon":2,"ts":10}`, withTs(pos(1, 2), 10e6), nil},
	{"auto: canonical ping carrying a tst: tst ignored", payload.Auto,
		`{"lat":1,"lon":2,"tst":10}`, pos(1, 2), nil},
	{"auto: _type key present but null: OwnTracks, MissingType", payload.Auto,
		`{"_type":null,"lat":1,"lon":2}`, payload.Position{}, payload.MissingType},
	{"canonical forced: a _type is just an unknown field", payload.Canonical,
		`{"_type":"transition","lat":1,"lon":2,"ts":10,"tst":99}`, withTs(pos(1, 2), 10e6), nil},
	{"unknown Format value: reads as auto", payload.Format(200),
		`{"_type":"location","lat":1,"lon":2,"tst":10}`, withTs(pos(1, 2), 10e9), nil},
}

func TestDecode(t *testing.T) {
	for _, group := range [][]decodeCase{canonicalCases, syntaxCases, ownTracksCases, autoCases} {
		for _, tc := range group {
			t.Run(tc.name, func(t *testing.T) {
				var d payload.Decoder
				got, err := d.Decode([]byte(tc.in), tc.format)
				if err != tc.err {
					t.Fatalf("Decode(%s) error = %v, want %v", tc.in, err, tc.err)
				}
				if got != tc.want {
					t.Fatalf("Decode(%s) = %+v, want %+v", tc.in, got, tc.want)
				}
			})
		}
	}
}

// TestDecodeReuse runs every case through one Decoder in sequence: state
// left by one payload must not leak into the next.
func TestDecodeReuse(t *testing.T) {
	var d payload.Decoder
	for range 2 {
		for _, group := range [][]decodeCase{canonicalCases, syntaxCases, ownTracksCases, autoCases} {
			for _, tc := range group {
				got, err := d.Decode([]byte(tc.in), tc.format)
				if err != tc.err || got != tc.want {
					t.Errorf("%s: reused Decode = %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.err)
				}
			}
		}
	}
}

// padTo returns a valid canonical payload of exactly n bytes.
func padTo(n int) []byte {
	const head, tail = `{"lat":1,"lon":2,"pad":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

func TestDecodeSize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxSize int
		n       int
		err     error
	}{
		{"tracker sends exactly DefaultMaxSize bytes: accepted", 0, payload.DefaultMaxSize, nil},
		{"tracker sends DefaultMaxSize+1 bytes: TooLarge", 0, payload.DefaultMaxSize + 1, payload.TooLarge},
		{"tracker sends exactly a custom MaxSize: accepted", 64, 64, nil},
		{"tracker sends a custom MaxSize+1: TooLarge", 64, 65, payload.TooLarge},
		{"negative MaxSize means the default: accepted", -1, payload.DefaultMaxSize, nil},
		{"negative MaxSize means the default: TooLarge past it", -1, payload.DefaultMaxSize + 1, payload.TooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := payload.Decoder{MaxSize: tc.maxSize}
			in := padTo(tc.n)
			if len(in) != tc.n {
				t.Fatalf("padTo(%d) made %d bytes", tc.n, len(in))
			}
			got, err := d.Decode(in, payload.Auto)
			if err != tc.err {
				t.Fatalf("Decode(%d bytes) error = %v, want %v", tc.n, err, tc.err)
			}
			if err == nil && got != pos(1, 2) {
				t.Fatalf("Decode(%d bytes) = %+v", tc.n, got)
			}
		})
	}
	t.Run("tracker sends oversize garbage: TooLarge, size checked before parsing", func(t *testing.T) {
		d := payload.Decoder{MaxSize: 8}
		if _, err := d.Decode([]byte("not json at all"), payload.Auto); err != payload.TooLarge {
			t.Fatalf("error = %v, want TooLarge", err)
		}
	})
}

func TestDecodeErrorsAreReasons(t *testing.T) {
	var d payload.Decoder
	_, err := d.Decode([]byte(`{"lat":95,"lon":0}`), payload.Canonical)
	if !errors.Is(err, payload.LatRange) {
		t.Fatalf("errors.Is(%v, LatRange) = false", err)
	}
	if errors.Is(err, payload.LonRange) {
		t.Fatalf("errors.Is(%v, LonRange) = true", err)
	}
	var r payload.Reason
	if !errors.As(err, &r) || r != payload.LatRange || r.String() != "lat_range" {
		t.Fatalf("errors.As(%v) = %v %q", err, r, r.String())
	}
}

// A wrong_type says which field: the decoder names it, for the reject
// message; other reasons name none.
func TestDecodeNamesTheWrongTypeField(t *testing.T) {
	for in, want := range map[string]string{
		`{"lat":"52.5","lon":13.4}`:                            "lat",
		`{"lat":52.5,"lon":true}`:                              "lon",
		`{"lat":52.5,"lon":13.4,"ts":"1764547200123"}`:         "ts",
		`{"lat":52.5,"lon":13.4,"acc":"8"}`:                    "acc",
		`{"_type":7,"lat":52.5,"lon":13.4}`:                    "_type",
		`{"_type":"location","lat":52.5,"lon":13.4,"tst":"1"}`: "tst",
		`{"lat":91,"lon":13.4}`:                                "",
		`{"lat":52.5,"lon":13.4}`:                              "",
	} {
		var d payload.Decoder
		d.Decode([]byte(`{"lat":"x","lon":1}`), payload.Auto) // a stale field must not carry over
		_, err := d.Decode([]byte(in), payload.Auto)
		if got := d.Field(); got != want || (want != "") != (err == payload.WrongType) {
			t.Errorf("%s: %v, field %q; want %q", in, err, got, want)
		}
	}
}
