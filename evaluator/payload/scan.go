package payload

import "encoding/binary"

// The scanner validates strict JSON (RFC 8259, exactly what
// encoding/json.Valid accepts) in one pass and, for a top-level object,
// notes where the values of the keys Decode reads lie. It never builds a
// tree or copies a byte, and it tracks nesting in a fixed bit stack instead
// of recursing, so no payload can make it allocate or grow the goroutine
// stack. Every index it returns is either just past what it consumed or -1
// for invalid input.

// maxDepth bounds how deeply arrays and objects may nest, the top level
// counting as 1; deeper input is NotJSON although encoding/json accepts
// it. The bound keeps the bit stack fixed; its value is the limit of the
// fastjson parser this package used before, so verdicts stayed put except
// in one corner: fastjson counted a scalar as a level too and rejected
// one inside 300 containers, which passes now.
const maxDepth = 300

// strPlain marks the bytes a JSON string holds as they are: all but
// control characters, '"' and '\\'. Bytes from 0x80 pass unchecked, as
// encoding/json.Valid passes invalid UTF-8.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < len(t); c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hexVal maps a hex digit to its value and every other byte to -1.
var hexVal = func() (t [256]int8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = int8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = int8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = int8(c - 'A' + 10)
		default:
			t[c] = -1
		}
	}
	return t
}()

func isDigit(c byte) bool { return c-'0' < 10 }

// scan validates fs.data as a single JSON value. For an object it records
// the top-level fields; otherwise it returns NotObject, but only once the
// whole input has proved to be JSON, as NotJSON is checked first.
func (fs *fields) scan() error {
	data := fs.data
	i := skipSpace(data, 0)
	if i == len(data) {
		return NotJSON
	}
	if data[i] != '{' {
		if i = skipValue(data, i, 0); i < 0 || skipSpace(data, i) != len(data) {
			return NotJSON
		}
		return NotObject
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return atEnd(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return NotJSON
		}
		var f int
		k := i + 1
		if f, i = knownKey(data, k); f < 0 {
			if i = skipString(data, k); i < 0 {
				return NotJSON
			}
			f = fieldOf(data[k : i-1])
		}
		if i = skipSpace(data, i); i >= len(data) || data[i] != ':' {
			return NotJSON
		}
		if i = skipSpace(data, i+1); i >= len(data) {
			return NotJSON
		}
		v := i
		var x float64
		var exact bool
		// Strings and numbers, the usual values, skip the general walk.
		switch c := data[i]; {
		case c == '"':
			i = skipString(data, i+1)
		case c == '-' || isDigit(c):
			i, x, exact = scanNumber(data, i)
		default:
			i = skipValue(data, i, 1)
		}
		if i < 0 {
			return NotJSON
		}
		if f >= 0 {
			fs.set(f, v, i, x, exact)
		}
		if i = skipSpace(data, i); i >= len(data) {
			return NotJSON
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return atEnd(data, i+1)
		default:
			return NotJSON
		}
	}
}

// Field names with their closing quote, as little-endian words.
const (
	wordLat  = 'l' | 'a'<<8 | 't'<<16 | '"'<<24
	wordLon  = 'l' | 'o'<<8 | 'n'<<16 | '"'<<24
	wordAcc  = 'a' | 'c'<<8 | 'c'<<16 | '"'<<24
	wordTst  = 't' | 's'<<8 | 't'<<16 | '"'<<24
	wordTs   = 't' | 's'<<8 | '"'<<16
	wordType = '_' | 't'<<8 | 'y'<<16 | 'p'<<24 | 'e'<<32 | '"'<<40
)

// knownKey recognises the plain spelling of a field name at data[k], just
// past a key's opening quote, with one load and a few compares, returning
// the field and the index past the closing quote. Anything else, f -1, is
// left to skipString and fieldOf.
func knownKey(data []byte, k int) (f, end int) {
	if len(data)-k < 8 {
		return -1, 0
	}
	w := binary.LittleEndian.Uint64(data[k:])
	switch w & 0xFFFFFFFF {
	case wordLat:
		return fLat, k + 4
	case wordLon:
		return fLon, k + 4
	case wordAcc:
		return fAcc, k + 4
	case wordTst:
		return fTst, k + 4
	}
	switch {
	case w&0xFFFFFF == wordTs:
		return fTs, k + 3
	case w&0xFFFFFFFFFFFF == wordType:
		return fType, k + 6
	}
	return -1, 0
}

// atEnd accepts the rest of data from i when it is only whitespace.
func atEnd(data []byte, i int) error {
	if skipSpace(data, i) != len(data) {
		return NotJSON
	}
	return nil
}

// skipSpace returns the index of the first non-whitespace byte from i.
func skipSpace(data []byte, i int) int {
	for ; i < len(data); i++ {
		c := data[i]
		if c > ' ' { // the usual case, settled by one compare
			break
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
	}
	return i
}

// skipValue validates the JSON value at data[i], which sits inside depth
// open arrays and objects, and returns the index just past it.
func skipValue(data []byte, i, depth int) int {
	var inObject [(maxDepth + 63) / 64]uint64 // bit d: level d+1 is an object
	base := depth
	for {
		if i >= len(data) {
			return -1
		}
		switch c := data[i]; c {
		case '{', '[':
			if depth == maxDepth {
				return -1
			}
			w, bit := depth>>6, uint64(1)<<(depth&63)
			if c == '{' {
				inObject[w] |= bit
			} else {
				inObject[w] &^= bit
			}
			depth++
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' is '{'+2 and ']' is '['+2
				i++
				depth--
				break // an empty container is a finished value
			}
			if c == '{' {
				if i = skipKey(data, i); i < 0 {
					return -1
				}
			}
			continue // to the first member's value
		case '"':
			i = skipString(data, i+1)
		case 't':
			i = skipLiteral(data, i, "true")
		case 'f':
			i = skipLiteral(data, i, "false")
		case 'n':
			i = skipLiteral(data, i, "null")
		default:
			if c != '-' && !isDigit(c) {
				return -1
			}
			i, _, _ = scanNumber(data, i)
		}
		if i < 0 {
			return -1
		}
		// A value is done: close the levels it finished until a comma
		// opens the next value, or the outermost level is done.
		for {
			if depth == base {
				return i
			}
			if i = skipSpace(data, i); i >= len(data) {
				return -1
			}
			d := depth - 1
			obj := inObject[d>>6]&(1<<(d&63)) != 0
			if data[i] == ',' {
				i = skipSpace(data, i+1)
				if obj {
					if i = skipKey(data, i); i < 0 {
						return -1
					}
				}
				break
			}
			closer := byte(']')
			if obj {
				closer = '}'
			}
			if data[i] != closer {
				return -1
			}
			i++
			depth--
		}
	}
}

// skipKey consumes `"key" :` and the whitespace after it, returning the
// index of the member's value.
func skipKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = skipString(data, i+1); i < 0 {
		return -1
	}
	if i = skipSpace(data, i); i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
}

// skipString validates a string whose opening quote is just before
// data[i] and returns the index past its closing quote.
func skipString(data []byte, i int) int {
	for i < len(data) {
		c := data[i]
		if strPlain[c] {
			i++
			continue
		}
		switch c {
		case '"':
			return i + 1
		case '\\':
			if i = skipEscape(data, i+1); i < 0 {
				return -1
			}
		default: // a raw control character
			return -1
		}
	}
	return -1
}

// skipEscape validates the escape whose backslash is just before data[i].
func skipEscape(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1
	case 'u':
		if len(data)-i < 5 {
			return -1
		}
		// Any four hex digits: like encoding/json, lone surrogates pass.
		if hexVal[data[i+1]]|hexVal[data[i+2]]|hexVal[data[i+3]]|hexVal[data[i+4]] < 0 {
			return -1
		}
		return i + 5
	}
	return -1
}

func skipLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
