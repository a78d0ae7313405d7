// Package jsonstr appends Go strings as JSON string literals, for the
// payloads the server builds by hand (transitions, late pings, rejects,
// captures, GeoJSON): one allocation-free function that every encoder
// shares, so none of them quotes with strconv, whose \x and \a escapes
// are Go, not JSON.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string (RFC 8259), as encoding/json
// writes it without HTML escaping: '"' and '\\' escaped, control bytes
// as \n, \r, \t, \b, \f or \u00XX, U+2028 and U+2029 as \u2028 and \u2029 (valid
// JSON, but line ends to JavaScript), and each byte that is not part of
// valid UTF-8 as \ufffd, the rune a decoder would read there anyway.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			default:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
