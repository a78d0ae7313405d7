package jsonstr_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/internal/jsonstr"
)

// The strings strconv.Quote escapes the Go way (\x01, \a, \x7f, \xff)
// come out as JSON that reads back as the string, as encoding/json writes
// them.
func TestAppendIsJSON(t *testing.T) {
	for _, s := range []string{
		"", "truck-1", "\x01", "\x7f", "a\x00b", "\a\b\f\v\x1f", "\u2028\u2029",
		"\xff", "ok\xc3", "\xed\xa0\x80", `quote " and \ backslash`, "tab\tnl\ncr\r",
		"ünïcødé 🚚", "<&>",
	} {
		got := jsonstr.Append(nil, s)
		if !json.Valid(got) {
			t.Errorf("%q: %s is not JSON", s, got)
			continue
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if back != eachInvalidReplaced(s) {
			t.Errorf("%q: read back as %q", s, back)
		}
		std, _ := marshalNoHTML(s)
		if string(got) != std {
			t.Errorf("%q: %s, encoding/json writes %s", s, got, std)
		}
	}
}

// eachInvalidReplaced is s with every byte that is not part of valid
// UTF-8 replaced by U+FFFD, as encoding/json reads it.
func eachInvalidReplaced(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		sb.WriteRune(r) // RuneError for an invalid byte
		i += size
	}
	return sb.String()
}

func marshalNoHTML(s string) (string, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	err := enc.Encode(s)
	return strings.TrimSuffix(sb.String(), "\n"), err
}

func TestAppendAllocatesNothing(t *testing.T) {
	b := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { b = jsonstr.Append(b[:0], "a\x01\"\xff\u2028z") }); n != 0 {
		t.Fatalf("%v allocations per Append", n)
	}
}

// Any bytes come out as valid JSON that reads back as the string, each
// invalid byte as U+FFFD, and as encoding/json writes it. (A property
// test, not a fuzz target: output's FuzzPayloads fuzzes this function
// through every encoder, within scripts/fuzz's budget.)
func TestAppendMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.String(),
			rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\x00', '\x01', '\x1f', '\x7f', 'a', 'é', '\u2028', '\u2029', '\ufffd'})),
			rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		).Draw(t, "s")
		got := jsonstr.Append([]byte("x"), s)[1:]
		if !json.Valid(got) {
			t.Fatalf("%q: %s is not JSON", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if back != eachInvalidReplaced(s) {
			t.Fatalf("%q read back as %q", s, back)
		}
		if std, _ := marshalNoHTML(s); string(got) != std {
			t.Fatalf("%q: %s, encoding/json writes %s", s, got, std)
		}
	})
}
