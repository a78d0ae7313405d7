package shadow

import (
	"strings"
	"time"
)

// List is a comma-separated list of strategies, a flag.Value: the holds
// of `simulate --holds`.
type List []Strategy

// DefaultList is arrival order, the fixed holds 200 ms, 500 ms and 2 s,
// and the adaptive hold.
func DefaultList() List {
	l := List(Strategies([]time.Duration{0, 200 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}))
	return append(l, Strategy{Name: "adaptive", Adaptive: true})
}

// String is the list as Set takes it (0s,200ms,adaptive), so that a
// default printed in a help can be typed back in.
func (l *List) String() string {
	s := make([]string, len(*l))
	for i, st := range *l {
		spec := st.Hold.String()
		if st.Adaptive {
			spec = "adaptive"
		}
		if st.NoAccuracy {
			spec += "-noacc"
		}
		s[i] = spec
	}
	return strings.Join(s, ",")
}

// Set parses a comma-separated list of strategies (ParseStrategy), taking
// their names in the tables too (arrival, hold=500ms).
func (l *List) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimPrefix(strings.TrimSpace(f), "hold=")
		if base, ok := strings.CutPrefix(f, "arrival"); ok {
			f = "0" + base
		}
		st, err := ParseStrategy(f)
		if err != nil {
			return err
		}
		*l = append(*l, st)
	}
	return nil
}
