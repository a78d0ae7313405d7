package lorawan

import "github.com/edgefence/edgefence/evaluator/payload"

// members iterates the members of the JSON object at data[i], validating
// as it goes: every value is checked by payload.SkipValue even when the
// caller ignores it, so walking a payload's top level to the end proves it
// is JSON. Nothing is copied: keys and values are slices of data.
type members struct {
	data  []byte
	i     int
	depth int // of the object's members
	first bool
	bad   bool
}

// object starts iterating the object v, a value of a walked object at
// nesting depth depth; ok is false when v is not an object.
func object(v []byte, depth int) (m members, ok bool) {
	if len(v) == 0 || v[0] != '{' {
		return m, false
	}
	return members{data: v, i: 1, depth: depth + 1, first: true}, true
}

// next returns the next member's key (the string's body, escapes
// undecoded) and value; ok is false at the end or on invalid JSON (then
// m.bad is set).
func (m *members) next() (key, v []byte, ok bool) {
	d := m.data
	i := payload.SkipSpace(d, m.i)
	if i >= len(d) {
		m.bad = true
		return nil, nil, false
	}
	if d[i] == '}' {
		m.i = i + 1
		return nil, nil, false
	}
	if !m.first {
		if d[i] != ',' {
			m.bad = true
			return nil, nil, false
		}
		i = payload.SkipSpace(d, i+1)
	}
	m.first = false
	if i >= len(d) || d[i] != '"' {
		m.bad = true
		return nil, nil, false
	}
	k := payload.SkipValue(d, i, m.depth)
	if k < 0 {
		m.bad = true
		return nil, nil, false
	}
	key = d[i+1 : k-1]
	i = payload.SkipSpace(d, k)
	if i >= len(d) || d[i] != ':' {
		m.bad = true
		return nil, nil, false
	}
	i = payload.SkipSpace(d, i+1)
	end := payload.SkipValue(d, i, m.depth)
	if end < 0 {
		m.bad = true
		return nil, nil, false
	}
	m.i = end
	return key, d[i:end], true
}

// elements iterates the values of the JSON array v.
type elements struct {
	data  []byte
	i     int
	depth int
	first bool
	bad   bool
}

func array(v []byte, depth int) (e elements, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return e, false
	}
	return elements{data: v, i: 1, depth: depth + 1, first: true}, true
}

func (e *elements) next() (v []byte, ok bool) {
	d := e.data
	i := payload.SkipSpace(d, e.i)
	if i >= len(d) {
		e.bad = true
		return nil, false
	}
	if d[i] == ']' {
		e.i = i + 1
		return nil, false
	}
	if !e.first {
		if d[i] != ',' {
			e.bad = true
			return nil, false
		}
		i = payload.SkipSpace(d, i+1)
	}
	e.first = false
	end := payload.SkipValue(d, i, e.depth)
	if end < 0 {
		e.bad = true
		return nil, false
	}
	e.i = end
	return d[i:end], true
}

// isNull reports whether a walked value is JSON null (absent, to us).
func isNull(v []byte) bool { return len(v) == 0 || v[0] == 'n' }
