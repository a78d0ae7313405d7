// Package deploy holds edgefence's deployment files, not Go code: the
// systemd unit and its config (systemd/), the container image and compose
// file (container/), Prometheus scrape config and alert rules
// (prometheus/), and a Grafana dashboard (grafana/). Its tests check that
// those files are well-formed and agree with the code: every flag they set
// exists, every metric an alert or panel queries is registered, and the
// shipped configuration starts a broker that reloads on SIGHUP and stops
// cleanly within the unit's TimeoutStopSec; and that scripts/cluster starts
// a scale-out cluster on loopback that turns a ping into a transition and
// stops it whole. docs/deploy.md and
// docs/runbook.md describe how to use them.
package deploy
