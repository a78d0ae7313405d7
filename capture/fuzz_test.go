package capture_test

import (
	"bytes"
	"testing"

	"github.com/edgefence/edgefence/capture"
)

// FuzzRead: any input reads without panic or error (a bytes.Reader has no
// I/O errors to report), and every record it yields survives a round trip
// through AppendJSON unchanged.
func FuzzRead(f *testing.F) {
	f.Add([]byte(line1 + "\n" + line2 + "\n"))
	f.Add([]byte(line1 + "\n" + line2[:30]))
	f.Add([]byte(`{"seq":1,"device":"\u0000\ud800","lat":-0,"lon":1e308,"acc":5e-324,"event":-9223372036854775808,"ingest":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []capture.Record
		st, err := capture.Read(bytes.NewReader(data), func(r *capture.Record) error {
			recs = append(recs, *r)
			return nil
		})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if lines := int64(bytes.Count(data, []byte{'\n'}) + 1); st.Records+st.Skipped > lines {
			t.Fatalf("%d records + %d skipped from %d lines", st.Records, st.Skipped, lines)
		}
		if int64(len(recs)) != st.Records {
			t.Fatalf("%d records seen, %d counted", len(recs), st.Records)
		}
		for _, r := range recs {
			line := capture.AppendJSON(nil, &r)
			if len(line) >= capture.MaxLine {
				continue // long floats in 'f' form can outgrow the line limit
			}
			var back []capture.Record
			st, err := capture.Read(bytes.NewReader(line), func(q *capture.Record) error {
				back = append(back, *q)
				return nil
			})
			if err != nil || st.Records != 1 || back[0] != r {
				t.Fatalf("round trip of %+v: %s read back %+v (%+v, %v)", r, line, back, st, err)
			}
		}
	})
}
