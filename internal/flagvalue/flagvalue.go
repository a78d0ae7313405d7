// Package flagvalue holds the flag.Value types the edgefence commands
// share beyond those of package flag: integers narrower than int, sizes
// with binary suffixes, RFC 3339 instants, comma-separated durations and
// on/off switches.
package flagvalue

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Uint is a flag for an unsigned setting narrower than uint64.
type Uint[T uint8 | uint16 | uint32] struct{ P *T }

// String is the value in decimal.
func (v Uint[T]) String() string {
	if v.P == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*v.P), 10)
}

// Set parses a decimal within T's range.
func (v Uint[T]) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, bits.Len64(uint64(^T(0))))
	if err != nil {
		return err
	}
	*v.P = T(n)
	return nil
}

// Int32 is a flag for an int32 setting.
type Int32 struct{ P *int32 }

// String is the value in decimal.
func (v Int32) String() string {
	if v.P == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*v.P), 10)
}

// Set parses a decimal within int32's range.
func (v Int32) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return err
	}
	*v.P = int32(n)
	return nil
}

// Small is a flag for a small unsigned setting from 0 to Max (a QoS).
type Small struct {
	P   *byte
	Max byte
}

// String is the value in decimal.
func (v Small) String() string {
	if v.P == nil {
		return "0"
	}
	return strconv.Itoa(int(*v.P))
}

// Set parses a decimal from 0 to Max.
func (v Small) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 8)
	if err != nil || byte(n) > v.Max {
		return fmt.Errorf("want 0..%d", v.Max)
	}
	*v.P = byte(n)
	return nil
}

// binary are the suffixes of Size, largest first.
var binary = []struct {
	suffix string
	size   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// Size is a size flag: bytes, or with a KiB, MiB or GiB suffix.
type Size struct{ P *int64 }

// String is the size in the largest unit that divides it: 512MiB.
func (b Size) String() string {
	if b.P == nil || *b.P == 0 {
		return "0"
	}
	for _, u := range binary {
		if *b.P%u.size == 0 {
			return strconv.FormatInt(*b.P/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(*b.P, 10)
}

// Set parses a non-negative size such as 512MiB or 1048576.
func (b Size) Set(s string) error {
	mult := int64(1)
	for _, u := range binary {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.size
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want a size such as 512MiB, got %q", s)
	}
	*b.P = n * mult
	return nil
}

// Off is an on|off flag stored as whether it is off (a setting whose zero
// value is on).
type Off struct{ P *bool }

// String is "on" or "off".
func (f Off) String() string {
	if f.P != nil && *f.P {
		return "off"
	}
	return "on"
}

// Set takes on, true or 1, and off, false or 0.
func (f Off) Set(v string) error {
	switch strings.ToLower(v) {
	case "on", "true", "1":
		*f.P = false
	case "off", "false", "0":
		*f.P = true
	default:
		return fmt.Errorf("want on or off, got %q", v)
	}
	return nil
}

// On is an on|off flag stored as whether it is on. Unlike a bool flag it
// takes its value after a space too (--gps-noise off), so it always needs
// one.
type On struct{ P *bool }

// String is "on" or "off".
func (f On) String() string {
	if f.P != nil && *f.P {
		return "on"
	}
	return "off"
}

// Set takes on, true or 1, and off, false or 0.
func (f On) Set(v string) error {
	var off bool
	if err := (Off{P: &off}).Set(v); err != nil {
		return err
	}
	*f.P = !off
	return nil
}

// Time is an RFC 3339 instant.
type Time struct{ P *time.Time }

// String is the instant in UTC, RFC 3339, to the second.
func (f Time) String() string {
	if f.P == nil {
		return ""
	}
	return f.P.UTC().Format(time.RFC3339)
}

// Set parses an RFC 3339 instant.
func (f Time) Set(v string) error {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2015-01-01T00:00:00Z: %w", err)
	}
	*f.P = t
	return nil
}

// Durations is a comma-separated list of durations.
type Durations []time.Duration

// String is the durations, comma-separated.
func (l *Durations) String() string {
	s := make([]string, len(*l))
	for i, d := range *l {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}

// Set replaces the list with v's durations.
func (l *Durations) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		*l = append(*l, d)
	}
	return nil
}

// Joined is a string flag that may hold commas: ff splits an environment
// variable's value on commas and sets the flag piece by piece
// (EDGEFENCE_NATS=nats://a:4222,nats://b:4222), so Joined joins the
// pieces again where a plain string flag would keep only the last. Given
// twice on the command line, the values are joined likewise.
type Joined struct {
	P   *string
	set bool
}

// String implements flag.Value.
func (j *Joined) String() string {
	if j.P == nil {
		return ""
	}
	return *j.P
}

// Set implements flag.Value.
func (j *Joined) Set(v string) error {
	if j.set {
		v = *j.P + "," + v
	}
	*j.P, j.set = v, true
	return nil
}
