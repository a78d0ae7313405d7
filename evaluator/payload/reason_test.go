package payload_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

func TestReasonLabels(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	all := append([]payload.Reason{payload.Ignored, payload.Uplink}, payload.Reasons()...)
	labels := map[string]payload.Reason{}
	messages := map[string]payload.Reason{}
	for _, r := range all {
		l, m := r.String(), r.Error()
		if !snake.MatchString(l) {
			t.Errorf("Reason(%d).String() = %q, not snake_case", r, l)
		}
		if prev, dup := labels[l]; dup {
			t.Errorf("label %q shared by %d and %d", l, prev, r)
		}
		labels[l] = r
		if !strings.HasPrefix(m, "payload: ") {
			t.Errorf("Reason %s message %q lacks the package prefix", l, m)
		}
		if prev, dup := messages[m]; dup {
			t.Errorf("message %q shared by %d and %d", m, prev, r)
		}
		messages[m] = r
	}
	for l, want := range map[string]payload.Reason{
		"too_large": payload.TooLarge, "not_json": payload.NotJSON, "not_object": payload.NotObject,
		"missing_lat": payload.MissingLat, "missing_lon": payload.MissingLon,
		"lat_range": payload.LatRange, "lon_range": payload.LonRange,
		"not_finite": payload.NotFinite, "wrong_type": payload.WrongType, "acc_range": payload.AccRange,
		"duplicate_key": payload.DuplicateKey, "missing_type": payload.MissingType,
	} {
		if labels[l] != want || want == payload.Ignored {
			t.Errorf("label %q belongs to %d, want %d", l, labels[l], want)
		}
	}
	if got := payload.LatRange.Error(); got != "payload: lat outside [-90, 90]" {
		t.Errorf("LatRange.Error() = %q", got)
	}
}

func TestReasons(t *testing.T) {
	rs := payload.Reasons()
	if slices.Contains(rs, payload.Ignored) || slices.Contains(rs, payload.Uplink) {
		t.Fatal("Reasons() includes Ignored or Uplink")
	}
	// Every value past the last listed reason and Uplink is unnamed: the
	// list is complete.
	last := max(slices.Max(rs), payload.Uplink)
	if len(rs) != int(last)-1 || int(last)+1 != payload.NumReasons {
		t.Fatalf("Reasons() has %d entries up to %d: gaps or duplicates", len(rs), last)
	}
	if got := (last + 1).String(); got != "unknown" {
		t.Fatalf("Reason past the last = %q, want unknown", got)
	}
	if got := (last + 1).Error(); got != "payload: unknown reason" {
		t.Fatalf("Reason past the last error = %q", got)
	}
	rs[0] = payload.Ignored
	if payload.Reasons()[0] == payload.Ignored {
		t.Fatal("Reasons() returns shared state")
	}
}

func TestReasonWrapped(t *testing.T) {
	err := fmt.Errorf("device dev-1: %w", payload.NotFinite)
	if !errors.Is(err, payload.NotFinite) {
		t.Fatal("errors.Is through %w failed")
	}
}
