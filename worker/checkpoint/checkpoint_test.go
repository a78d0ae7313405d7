package checkpoint

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/edgefence/edgefence/evaluator/snapshot"
	"github.com/edgefence/edgefence/ingest"
)

// A checkpoint saved before the frame windows were kept still loads, with
// none: gob matches fields by name, so fields added later are absent in
// old checkpoints and ignored by old workers.
func TestCheckpointWithoutFramesLoads(t *testing.T) {
	type before struct { // checkpoint as it was
		Seq     uint64
		Clock   int64
		Sent    string
		Snap    *snapshot.State
		HistSeq uint64
		Fences  string
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&before{Seq: 7, Clock: 9, Sent: "x", Snap: &snapshot.State{Cursor: 1}, HistSeq: 3, Fences: "v"}); err != nil {
		t.Fatal(err)
	}
	var ck checkpoint
	if err := gob.NewDecoder(&buf).Decode(&ck); err != nil {
		t.Fatal(err)
	}
	if ck.Seq != 7 || ck.Fences != "v" || ck.Snap == nil || ck.Snap.Cursor != 1 || ck.Frames != nil {
		t.Fatalf("old checkpoint read as %+v", ck)
	}

	// And a new one read by an old worker.
	buf.Reset()
	if err := gob.NewEncoder(&buf).Encode(&checkpoint{Seq: 8, Snap: &snapshot.State{}, Frames: []ingest.FrameWindow{{Device: "d", Top: 3, Seen: 5, Gen: 2}}}); err != nil {
		t.Fatal(err)
	}
	var old before
	if err := gob.NewDecoder(&buf).Decode(&old); err != nil || old.Seq != 8 {
		t.Fatalf("new checkpoint read by an old worker: %+v %v", old, err)
	}
}

// TestEncodeKeepsTheStoredName: gob writes the type's name into every
// stored checkpoint; it stays "checkpoint", as before State moved here.
func TestEncodeKeepsTheStoredName(t *testing.T) {
	data, err := Encode(&State{Seq: 1, Snap: &snapshot.State{}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("\ncheckpoint\x01")) {
		t.Fatalf("encoded as %q", data)
	}
}
