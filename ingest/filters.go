package ingest

import "strings"

// Covers reports whether every topic that filter can match is also matched
// by pattern: a subscription is allowed only if it cannot reach beyond what
// its role may read. Both are MQTT topic filters.
func Covers(pattern, filter string) bool {
	for {
		p, prest, pmore := strings.Cut(pattern, "/")
		f, frest, fmore := strings.Cut(filter, "/")
		switch {
		case p == "#":
			return true
		case f == "#":
			return false // the filter reaches deeper than a non-# pattern level
		case p == "+":
			// matches any single level, including a '+' in the filter
		case f == "+" || p != f:
			return false
		}
		if pmore != fmore {
			// "a/#" also matches "a"; nothing else of unequal depth does.
			return !fmore && pmore && prest == "#"
		}
		if !pmore {
			return true
		}
		pattern, filter = prest, frest
	}
}

// Matches reports whether topic (no wildcards) falls under the MQTT topic
// filter. It knows nothing of '$' topics, which a filter starting with a
// wildcard must not match: the caller decides on those.
func Matches(filter, topic string) bool { return Covers(filter, topic) }

// Unshare strips a shared-subscription prefix: $share/<group>/<filter>
// reads the same topics as <filter>.
func Unshare(filter string) string {
	if rest, ok := strings.CutPrefix(filter, "$share/"); ok {
		if _, f, ok := strings.Cut(rest, "/"); ok {
			return f
		}
	}
	return filter
}

// Overlaps reports whether some topic matches both MQTT topic filters.
func Overlaps(a, b string) bool {
	for {
		x, arest, amore := strings.Cut(a, "/")
		y, brest, bmore := strings.Cut(b, "/")
		switch {
		case x == "#" || y == "#":
			return true
		case x != "+" && y != "+" && x != y:
			return false
		}
		if amore != bmore {
			// One filter ends here: the other matches its topics too only
			// if all it has left is "#" ("a/#" also matches "a").
			if amore {
				return arest == "#"
			}
			return brest == "#"
		}
		if !amore {
			return true
		}
		a, b = arest, brest
	}
}
