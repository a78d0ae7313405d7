package broker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// contents reads every key of l.
func contents(t testing.TB, l *appendLog) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range l.keysWithPrefix("") {
		v, err := l.get(k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(v)
	}
	return out
}

func reopen(t testing.TB, l *appendLog) (*appendLog, int64) {
	t.Helper()
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	l, cut, err := openAppendLog(l.path)
	if err != nil {
		t.Fatal(err)
	}
	return l, cut
}

// A crash mid-commit leaves a torn record at the end of the log: opening
// it keeps every whole commit before it, cuts the rest off, and carries on
// appending where the good part ends.
func TestAppendLogKeepsEveryWholeCommitOfATornFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), logFile)
	l, _, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 5 {
		batch := map[string][]byte{}
		for j := range 10 {
			k, v := fmt.Sprintf("k%d", j), fmt.Sprintf("v%d-%d", i, j)
			batch[k], want[k] = []byte(v), v
		}
		batch["k3"] = nil // deleted in every commit
		delete(want, "k3")
		if err := l.commit(batch); err != nil {
			t.Fatal(err)
		}
	}
	good := l.size
	for _, tail := range [][]byte{
		appendRecord(nil, "k1", []byte("torn"))[:9],            // cut in the middle
		append(appendRecord(nil, "k1", []byte("flip")), 0)[1:], // misaligned
		bytes.Repeat([]byte{0xff}, 20),                         // garbage
		{1, 2, 3},                                              // a short header
	} {
		if _, err := l.f.WriteAt(tail, good); err != nil {
			t.Fatal(err)
		}
		var cut int64
		l, cut = reopen(t, l)
		if cut != int64(len(tail)) || l.size != good {
			t.Fatalf("tail of %d bytes: cut %d, size %d; want %d cut, size %d", len(tail), cut, l.size, len(tail), good)
		}
		if got := contents(t, l); !maps.Equal(got, want) {
			t.Fatalf("after cutting a tail: %v, want %v", got, want)
		}
	}
	if err := l.commit(map[string][]byte{"k9": []byte("after")}); err != nil {
		t.Fatal(err)
	}
	want["k9"] = "after"
	l, _ = reopen(t, l)
	defer l.close()
	if got := contents(t, l); !maps.Equal(got, want) {
		t.Fatalf("a commit after the cut: %v, want %v", got, want)
	}
}

// A log that has grown to twice its live records is rewritten with only
// those: the file shrinks, and its contents (reopened, too) are the same.
func TestAppendLogCompacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), logFile)
	l, _, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("x"), 4000)
	want := map[string]string{}
	peak := int64(0)
	for i := range 3000 { // 12 MB written over 100 keys
		k := fmt.Sprintf("RET_geofence/f/dev-%d", i%100)
		v := append(fmt.Appendf(nil, "%d:", i), value...)
		if err := l.commit(map[string][]byte{k: v}); err != nil {
			t.Fatal(err)
		}
		want[k] = string(v)
		peak = max(peak, l.size)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if peak > compactAbove+8100 || st.Size() != l.size || l.size > compactFactor*l.live {
		t.Fatalf("file peaked at %d bytes, is %d (%d live); want it rewritten past %d", peak, st.Size(), l.live, compactAbove)
	}
	if got := contents(t, l); !maps.Equal(got, want) {
		t.Fatal("contents changed by the rewrite")
	}
	l, _ = reopen(t, l)
	defer l.close()
	if got := contents(t, l); !maps.Equal(got, want) {
		t.Fatal("contents changed after reopening the rewritten file")
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Fatalf("the rewrite's temporary file is left: %v", err)
	}
}

// Any bytes read as a log (what openAppendLog reads before it cuts the
// file): reading stops only at the end, at a torn record or at a corrupt
// one; the prefix it keeps reads again to the same keys, with nothing
// left over; and every key's value lies inside that prefix. In memory, so
// that it runs fast: the file handling around it has its own tests.
func FuzzAppendLog(f *testing.F) {
	var seed []byte
	seed = appendRecord(seed, "a", []byte("1"))
	seed = appendRecord(seed, "b", []byte("2"))
	seed = appendRecord(seed, "a", nil)
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add([]byte{})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		first := &appendLog{keys: map[string]valueRef{}}
		end, err := first.load(bytes.NewReader(data), int64(len(data)))
		switch {
		case end > int64(len(data)):
			t.Fatalf("kept %d of %d bytes", end, len(data))
		case err == nil && end != int64(len(data)):
			t.Fatalf("stopped at %d of %d bytes without a reason", end, len(data))
		case err != nil && !errors.Is(err, errCorruptRecord) && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Fatalf("stopped on %v", err)
		}
		again := &appendLog{keys: map[string]valueRef{}}
		if end2, err := again.load(bytes.NewReader(data[:end]), end); end2 != end || err != nil {
			t.Fatalf("the kept prefix read again: %d bytes, %v; want %d, nil", end2, err, end)
		}
		if !maps.Equal(first.keys, again.keys) || first.live != again.live {
			t.Fatalf("the kept prefix read again: %v (%d live), first %v (%d)", again.keys, again.live, first.keys, first.live)
		}
		for k, ref := range first.keys {
			if ref.n <= 0 || ref.off+int64(ref.n) > end {
				t.Fatalf("%q points at %d+%d, past the kept %d bytes", k, ref.off, ref.n, end)
			}
		}
	})
}

// A rewrite that fails (here: its temporary file cannot be created)
// leaves the log in use and every commit committed, and is tried again
// only once the file has grown by another compactAbove, not at every
// commit; once it can, it succeeds.
func TestAppendLogRetriesAFailedRewriteLater(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, logFile)
	l, _, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.close() }()
	if err := os.Mkdir(path+".compact", 0o700); err != nil { // in the way of the rewrite
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("y"), 4000)
	failures, commits := 0, 0
	for i := 0; l.size < 3*compactAbove; i++ {
		err := l.commit(map[string][]byte{fmt.Sprintf("k%d", i%10): value})
		commits++
		switch {
		case errors.Is(err, errCompacting):
			failures++
		case err != nil:
			t.Fatal(err)
		}
	}
	if failures < 1 || failures > 3 {
		t.Fatalf("%d failed rewrites in %d commits up to %d bytes; want one per %d bytes of growth", failures, commits, l.size, compactAbove)
	}
	if got := len(contents(t, l)); got != 10 {
		t.Fatalf("%d keys after failed rewrites, want 10", got)
	}
	if err := os.Remove(path + ".compact"); err != nil {
		t.Fatal(err)
	}
	for i := 0; l.size >= compactAbove; i++ {
		if i > 2000 {
			t.Fatalf("no rewrite after the way was cleared: %d bytes", l.size)
		}
		if err := l.commit(map[string][]byte{fmt.Sprintf("k%d", i%10): value}); err != nil {
			t.Fatal(err)
		}
	}
}
