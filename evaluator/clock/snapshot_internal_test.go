package clock

import (
	"reflect"
	"testing"
)

// A field added to Model or bootClock without a place in their snapshots
// fails here.
func TestSnapshotCoversEveryModelField(t *testing.T) {
	if got, want := reflect.TypeFor[ModelSnapshot]().NumField(), reflect.TypeFor[Model]().NumField(); got != want {
		t.Errorf("Model has %d fields, ModelSnapshot %d: put the new state in the snapshot (and RestoreModel)", want, got)
	}
	if got, want := reflect.TypeFor[BootSnapshot]().NumField(), reflect.TypeFor[bootClock]().NumField(); got != want {
		t.Errorf("bootClock has %d fields, BootSnapshot %d: put the new state in the snapshot (and RestoreModel)", want, got)
	}
}
