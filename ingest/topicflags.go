package ingest

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// TopicFlags is --telemetry-topic with --telemetry-topic-replace, the
// flags serve, bridge and worker share.
// The filters given are added to the defaults, so that adding a LoRaWAN
// network server's topic does not silently stop the trackers' topics
// from being evaluated; one given for a default's own filter (with
// another format or mapping) takes that default's place. With
// --telemetry-topic-replace the filters given are the only ones; a shared
// subscription ($share/...) needs it.
type TopicFlags struct {
	defaults []string
	given    []string
	replace  bool
}

// NewTopicFlags returns the flags with the default filters.
func NewTopicFlags() *TopicFlags {
	return &TopicFlags{defaults: DefaultTelemetryFilters}
}

// String is the defaults, then the filters given, comma-separated.
func (t *TopicFlags) String() string {
	if t == nil {
		return ""
	}
	return strings.Join(append(t.defaults[:len(t.defaults):len(t.defaults)], t.given...), ",")
}

// Set adds a filter.
func (t *TopicFlags) Set(v string) error {
	t.given = append(t.given, v)
	return nil
}

// Register defines both flags on fs; help says what a filter is.
func (t *TopicFlags) Register(fs *flag.FlagSet, help string) {
	fs.Var(t, "telemetry-topic", help+"; repeatable, added to the defaults (a default's own filter given again takes its place)")
	fs.BoolVar(&t.replace, "telemetry-topic-replace", false, "the --telemetry-topic filters replace the defaults instead of adding to them")
}

// Filters parses the filters in effect.
func (t *TopicFlags) Filters() ([]TelemetryFilter, error) {
	given, err := ParseTelemetryFilters(t.given)
	if err != nil {
		return nil, err
	}
	if t.replace {
		if len(given) == 0 {
			return nil, errors.New("--telemetry-topic-replace needs at least one --telemetry-topic")
		}
		return given, nil
	}
	for _, g := range given {
		if g.Share != "" {
			// Bridges sharing a subscription would each evaluate every
			// ping on the unshared defaults beside it.
			return nil, fmt.Errorf("--telemetry-topic %s is a shared subscription, and the default filters beside it are not: "+
				"give --telemetry-topic-replace with every filter to subscribe to", g.Filter)
		}
	}
	out, err := ParseTelemetryFilters(t.defaults)
	if err != nil {
		return nil, err
	}
	for _, g := range given {
		i := indexFilter(out, g)
		if i < 0 {
			out = append(out, g)
			continue
		}
		out[i] = g
	}
	return out, nil
}

// indexFilter is the index in fs of the filter that matches the same
// topics as f (a shared subscription's group aside), or -1.
func indexFilter(fs []TelemetryFilter, f TelemetryFilter) int {
	for i := range fs {
		if Unshare(fs[i].Filter) == Unshare(f.Filter) {
			return i
		}
	}
	return -1
}
