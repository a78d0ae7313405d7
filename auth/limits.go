package auth

import (
	"errors"
	"fmt"
	"math"

	"gopkg.in/yaml.v3"
)

// Limit is a publish rate limit: Rate publishes a second on average, with
// bursts of up to Burst. Rate 0 means no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// ErrBadLimit is a malformed entry of the limits mapping.
var ErrBadLimit = errors.New("bad rate limit")

// Limit returns the publish rate limit the file sets for role, and
// whether it sets one (the server's defaults apply otherwise).
func (f *File) Limit(r Role) (Limit, bool) {
	l, ok := f.limits[r]
	return l, ok
}

// HasLimits reports whether the file sets a limit for any role.
func (f *File) HasLimits() bool { return len(f.limits) > 0 }

// parseLimits parses the optional limits mapping, role -> {rate, burst}:
//
//	limits:
//	  device:  {rate: 20, burst: 40}
//	  gateway: {rate: 50, burst: 100}
//	  admin:   {rate: 0}   # no limit
func parseLimits(n *yaml.Node) (map[Role]Limit, error) {
	if n == nil {
		return nil, nil
	}
	n = resolve(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %w: limits must be a mapping of role to {rate, burst}", n.Line, ErrBadLimit)
	}
	out := map[Role]Limit{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		r, err := ParseRole(k.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: limits: %w", k.Line, err)
		}
		if _, dup := out[r]; dup {
			return nil, fmt.Errorf("line %d: limits: role %s given twice", k.Line, r)
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: %w: limits.%s must be {rate: <per second>, burst: <publishes>}", v.Line, ErrBadLimit, r)
		}
		if err := checkKeys(v, []string{"rate", "burst"}); err != nil {
			return nil, fmt.Errorf("limits.%s: %w", r, err)
		}
		var raw struct {
			Rate  *float64 `yaml:"rate"`
			Burst *int     `yaml:"burst"`
		}
		if err := v.Decode(&raw); err != nil {
			return nil, fmt.Errorf("line %d: %w: limits.%s: %w", v.Line, ErrBadLimit, r, flatten(err))
		}
		var l Limit
		switch {
		case raw.Rate == nil:
			return nil, fmt.Errorf("line %d: %w: limits.%s needs a rate (publishes per second; 0: no limit)", v.Line, ErrBadLimit, r)
		case *raw.Rate < 0 || math.IsNaN(*raw.Rate) || math.IsInf(*raw.Rate, 0):
			return nil, fmt.Errorf("line %d: %w: limits.%s rate must be 0 or more publishes per second", v.Line, ErrBadLimit, r)
		case *raw.Rate > 0 && (raw.Burst == nil || *raw.Burst < 1):
			return nil, fmt.Errorf("line %d: %w: limits.%s needs a burst of at least 1 publish", v.Line, ErrBadLimit, r)
		}
		l.Rate = *raw.Rate
		if raw.Burst != nil {
			l.Burst = *raw.Burst
		}
		out[r] = l
	}
	return out, nil
}
