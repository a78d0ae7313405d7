// Package slogtext reads back what log/slog's TextHandler wrote: the tests
// that run edgefence as a child process learn from its log the addresses
// it bound (it is started on port 0, so no other process can take them
// between a pick and the bind).
package slogtext

import (
	"strconv"
	"strings"
)

// Find returns the attributes (msg, level and the rest, unquoted) of the
// first line of out whose message begins with msg, and whether there was
// one. A line cut short (still being written) does not count.
func Find(out, msg string) (map[string]string, bool) {
	for line := range strings.Lines(out) {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		attrs, ok := Parse(strings.TrimSuffix(line, "\n"))
		if ok && strings.HasPrefix(attrs["msg"], msg) {
			return attrs, true
		}
	}
	return nil, false
}

// Parse splits one TextHandler line into its key=value attributes; a
// quoted key or value is unquoted. ok is false for a line that is not in
// that format.
func Parse(line string) (attrs map[string]string, ok bool) {
	attrs = map[string]string{}
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		key, rest, ok := token(line, "=")
		if !ok || !strings.HasPrefix(rest, "=") {
			return nil, false
		}
		value, rest, ok := token(rest[1:], " ")
		if !ok {
			return nil, false
		}
		attrs[key], line = value, rest
	}
	return attrs, len(attrs) > 0
}

// token reads a quoted string, or the text up to the first of stops.
func token(s, stops string) (tok, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", false
		}
		tok, err = strconv.Unquote(q)
		return tok, s[len(q):], err == nil
	}
	if i := strings.IndexAny(s, stops); i >= 0 {
		return s[:i], s[i:], true
	}
	return s, "", true
}
