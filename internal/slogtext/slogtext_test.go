package slogtext

import (
	"bytes"
	"log/slog"
	"testing"
)

// What slog's own TextHandler writes, quoting and all, reads back.
func TestFindReadsTextHandlerOutput(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(slog.NewTextHandler(&b, nil))
	log.Info("added hook", "hook", "edgefence-access")
	log.Info("edgefence serving", "mqtt", "127.0.0.1:40123", "mqtts", "", "http", "[::1]:9090",
		"data_dir", `/tmp/a dir/"x"`, "auth", false)
	log.Info("edgefence serving again", "mqtt", "127.0.0.1:1")

	a, ok := Find(b.String(), "edgefence serving")
	if !ok {
		t.Fatalf("no line found in:\n%s", b.String())
	}
	for k, want := range map[string]string{
		"level": "INFO", "msg": "edgefence serving", "mqtt": "127.0.0.1:40123", "mqtts": "",
		"http": "[::1]:9090", "data_dir": `/tmp/a dir/"x"`, "auth": "false",
	} {
		if got, has := a[k]; !has || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, has, want)
		}
	}
	if _, ok := Find(b.String(), "edgefence stopped"); ok {
		t.Error("found a message that was never logged")
	}
}

// A line still being written is not read: its last value may be cut.
func TestFindIgnoresAnUnfinishedLine(t *testing.T) {
	if a, ok := Find(`level=INFO msg="edgefence serving" mqtt=127.0.0.1:401`, "edgefence serving"); ok {
		t.Fatalf("read an unfinished line: %v", a)
	}
}

func TestParseRejectsWhatIsNotTextHandlerOutput(t *testing.T) {
	for _, line := range []string{"", "panic: oops", `msg="unterminated`, "goroutine 1 [running]:"} {
		if a, ok := Parse(line); ok {
			t.Errorf("Parse(%q) = %v, want not ok", line, a)
		}
	}
}
