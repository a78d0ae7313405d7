package hooks

import "strings"

// covers reports whether every topic that filter can match is also matched
// by pattern: a subscription is allowed only if it cannot reach beyond what
// its role may read. Both are MQTT topic filters.
func covers(pattern, filter string) bool {
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
func Matches(filter, topic string) bool { return covers(filter, topic) }

// unshare strips a shared-subscription prefix: $share/<group>/<filter>
// reads the same topics as <filter>.
func unshare(filter string) string {
	if rest, ok := strings.CutPrefix(filter, "$share/"); ok {
		if _, f, ok := strings.Cut(rest, "/"); ok {
			return f
		}
	}
	return filter
}
