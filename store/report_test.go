package store

import (
	"strings"
	"testing"
)

// A report names every problem with its file, then says whether the store
// is damaged; a record key too long to be useful is cut, and one with
// control bytes is quoted.
func TestReportPrint(t *testing.T) {
	var b strings.Builder
	(&Report{Path: "/d/edgefence.db", Records: 3}).Print(&b)
	if want := "/d/edgefence.db: ok, 3 readable records\n"; b.String() != want {
		t.Errorf("clean store: %q, want %q", b.String(), want)
	}
	b.Reset()
	(&Report{
		Path: "/d/edgefence.db", Records: 2,
		Problems: []string{"page 7: unreachable unfreed"},
		Bad:      []string{"geofence/f\x01/" + strings.Repeat("x", 200)},
		Stopped:  []string{"cursor stopped at page 9"},
	}).Print(&b)
	want := "/d/edgefence.db: bbolt: page 7: unreachable unfreed\n" +
		"/d/edgefence.db: unreadable record \"geofence/f\\x01/" + strings.Repeat("x", 128-len("geofence/f\x01/")) + "\"\n" +
		"/d/edgefence.db: cursor stopped at page 9\n" +
		"/d/edgefence.db: damaged, 2 readable records\n"
	if b.String() != want {
		t.Errorf("damaged store:\n%s\nwant:\n%s", b.String(), want)
	}
}
