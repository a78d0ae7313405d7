package flagvalue

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// Sizes read back as written, so -h shows the defaults as a user would
// type them.
func TestSizeRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"128MiB", "128MiB"}, {"1GiB", "1GiB"}, {"1024MiB", "1GiB"}, {"1536KiB", "1536KiB"}, {"1000", "1000"}, {"0", "0"},
	} {
		var n int64
		if err := (Size{&n}).Set(tc.in); err != nil {
			t.Fatalf("Set(%q): %v", tc.in, err)
		}
		if got := (Size{&n}).String(); got != tc.out {
			t.Errorf("Set(%q) reads back %q, want %q", tc.in, got, tc.out)
		}
	}
	var n int64
	for _, bad := range []string{"-1", "12MB", "lots"} {
		if err := (Size{&n}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

// Each value's flag parses what it documents, refuses the rest with a
// flag error, and prints its default as a user would type it.
func TestValues(t *testing.T) {
	var (
		u16   uint16 = 7
		u32   uint32
		i32   int32
		qos   byte
		off   bool
		at    time.Time
		holds = Durations{0, time.Second}
	)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Uint[uint16]{&u16}, "u16", "")
	fs.Var(Uint[uint32]{&u32}, "u32", "")
	fs.Var(Int32{&i32}, "i32", "")
	fs.Var(Small{&qos, 1}, "qos", "")
	fs.Var(Off{&off}, "engine", "")
	fs.Var(Time{&at}, "time", "")
	fs.Var(&holds, "holds", "")
	if got := fs.Lookup("u16").DefValue + " " + fs.Lookup("holds").DefValue + " " + fs.Lookup("engine").DefValue; got != "7 0s,1s on" {
		t.Errorf("defaults %q", got)
	}
	err := fs.Parse([]string{"-u16", "65535", "-u32", "4294967295", "-i32", "-2147483648", "-qos", "1", "-engine", "OFF",
		"-time", "2015-01-01T01:00:00+01:00", "-holds", "200ms, 2s"})
	if err != nil {
		t.Fatal(err)
	}
	if u16 != 65535 || u32 != 4294967295 || i32 != -2147483648 || qos != 1 || !off || !at.Equal(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		!slices.Equal(holds, Durations{200 * time.Millisecond, 2 * time.Second}) {
		t.Errorf("parsed %d %d %d %d %v %v %v", u16, u32, i32, qos, off, at, holds)
	}
	if got := fs.Lookup("time").Value.String() + " " + fs.Lookup("engine").Value.String(); got != "2015-01-01T00:00:00Z off" {
		t.Errorf("read back %q", got)
	}
	for _, bad := range [][]string{
		{"-u16", "65536"}, {"-u16", "-1"}, {"-u32", "4294967296"}, {"-i32", "2147483648"},
		{"-qos", "2"}, {"-engine", "maybe"}, {"-time", "2015-01-01"}, {"-holds", "1s,soon"},
	} {
		if err := fs.Parse(bad); err == nil || !strings.Contains(err.Error(), "invalid value") {
			t.Errorf("%q: %v, want an invalid value", bad, err)
		}
	}
}

// On takes its value after a space or an equals sign, and reads back.
func TestOn(t *testing.T) {
	on := true
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(On{&on}, "gps-noise", "")
	for _, tc := range []struct {
		args []string
		want bool
	}{{[]string{"-gps-noise", "off"}, false}, {[]string{"--gps-noise=true"}, true}, {[]string{"--gps-noise=0"}, false}, {[]string{"-gps-noise", "ON"}, true}} {
		if err := fs.Parse(tc.args); err != nil || on != tc.want || fs.Lookup("gps-noise").Value.String() != map[bool]string{true: "on", false: "off"}[tc.want] {
			t.Errorf("%q: %v, %v; want %v", tc.args, on, err, tc.want)
		}
	}
	if err := fs.Parse([]string{"-gps-noise", "maybe"}); err == nil || !strings.Contains(err.Error(), "want on or off") {
		t.Errorf("maybe: %v", err)
	}
}
