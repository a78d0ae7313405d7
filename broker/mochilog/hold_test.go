package mochilog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Until the start succeeds nothing of mochi's is written; then all of
// it, in order, with the logger's attributes. A failed start writes its
// warnings and errors only, then and after.
func TestGateHoldsUntilReleaseAndDropsInfoOnFailure(t *testing.T) {
	var buf bytes.Buffer
	h, g := Hold(slog.NewTextHandler(&buf, nil))
	log := slog.New(h).With("component", "mqtt")
	log.Info("added hook", "hook", "a")
	log.Warn("odd")
	log.Info("added hook", "hook", "b")
	if buf.Len() != 0 {
		t.Fatalf("written before the start ended:\n%s", &buf)
	}
	g.Release()
	log.Info("late")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !strings.Contains(l, "component=mqtt") {
			t.Errorf("line without the logger's attributes: %s", l)
		}
		_, msg, _ := strings.Cut(l, "msg=")
		got = append(got, msg)
	}
	if want := []string{`"added hook" component=mqtt hook=a`, "odd component=mqtt", `"added hook" component=mqtt hook=b`, "late component=mqtt"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("released:\n%q\nwant\n%q", got, want)
	}

	buf.Reset()
	h, g = Hold(slog.NewTextHandler(&buf, nil))
	log = slog.New(h)
	log.Info("added hook")
	log.Error("listener failed")
	g.Drop()
	log.Info("stopping hook")
	log.Warn("close slow")
	if out := buf.String(); strings.Contains(out, "hook") || !strings.Contains(out, "listener failed") || !strings.Contains(out, "close slow") {
		t.Errorf("after a failed start:\n%s\nwant the error and the warning only", out)
	}
}
