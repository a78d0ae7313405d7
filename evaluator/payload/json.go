package payload

// The scanner's primitives, for decoders of nested formats (package
// lorawan) that walk objects Decode does not: the same strict JSON, the
// same nesting bound, no allocation.

// SkipValue validates the JSON value that begins exactly at data[i],
// nested inside depth open arrays and objects, and returns the index just
// past it, or -1 when it is not valid JSON or nests deeper than Decode
// allows.
func SkipValue(data []byte, i, depth int) int {
	if i < 0 || i >= len(data) || depth >= maxDepth {
		return -1
	}
	return skipValue(data, i, depth)
}

// SkipSpace returns the index of the first byte from i that is not JSON
// whitespace.
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// Number reads the JSON number v, which SkipValue accepted, exactly as
// strconv.ParseFloat rounds it; false when v is not a number or
// overflows float64.
func Number(v []byte) (float64, bool) {
	if len(v) == 0 || v[0] != '-' && !isDigit(v[0]) {
		return 0, false
	}
	end, x, exact := scanNumber(v, 0)
	if end != len(v) {
		return 0, false
	}
	if exact {
		return x, true
	}
	return parseNumber(v)
}

// KeyIs reports whether raw, the body of a JSON string SkipValue accepted
// (escapes undecoded), spells the ASCII name.
func KeyIs(raw []byte, name string) bool {
	if string(raw) == name {
		return true
	}
	if len(raw) <= len(name) || len(raw) > 6*len(name) {
		return false // an escape only ever lengthens a spelling
	}
	n := 0
	for i := 0; i < len(raw); n++ {
		if n == len(name) {
			return false
		}
		c := raw[i]
		if c == '\\' {
			switch e := raw[i+1]; e {
			case 'u':
				h := raw[i+2 : i+6]
				if h[0] != '0' || h[1] != '0' || hexVal[h[2]] > 7 {
					return false // not ASCII
				}
				c = byte(hexVal[h[2]])<<4 | byte(hexVal[h[3]])
				i += 6
			default:
				c = unescapeByte[e]
				i += 2
			}
		} else {
			i++
		}
		if c != name[n] {
			return false
		}
	}
	return n == len(name)
}
