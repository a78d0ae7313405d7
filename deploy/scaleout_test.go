package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The scale-out compose file (deploy/scaleout/compose.yaml): NATS nodes
// and `edgefence serve --cluster` nodes, and the Prometheus job and alert
// group that watch the nodes.

const (
	scaleoutNATSConf = "scaleout/nats.conf"
	// clusterJob is the scrape job of the scale-out nodes; the rules of
	// clusterGroup sum by job, and their unit tests name it.
	clusterJob   = "edgefence-cluster"
	clusterGroup = "edgefence.cluster"
	// singleJob is the single box's scrape job.
	singleJob = "edgefence"
)

type scaleoutService struct {
	Build *struct {
		Context    string `yaml:"context"`
		Dockerfile string `yaml:"dockerfile"`
	} `yaml:"build"`
	Image           string            `yaml:"image"`
	Hostname        string            `yaml:"hostname"`
	Restart         string            `yaml:"restart"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	DependsOn       []string          `yaml:"depends_on"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	Ports           []string          `yaml:"ports"`
	Volumes         []string          `yaml:"volumes"`
	MemLimit        string            `yaml:"mem_limit"`
	MemswapLimit    string            `yaml:"memswap_limit"`
	Ulimits         map[string]any    `yaml:"ulimits"`
	ReadOnly        bool              `yaml:"read_only"`
	CapDrop         []string          `yaml:"cap_drop"`
	SecurityOpt     []string          `yaml:"security_opt"`
}

// edgefence reports whether the service runs the edgefence image.
func (s scaleoutService) edgefence() bool { return s.Build != nil || s.Image == "edgefence:local" }

// args returns the service's --flag=value arguments after the
// subcommand, and those of any other form.
func (s scaleoutService) args() (flags map[string]string, malformed []string) {
	flags = map[string]string{}
	for _, a := range s.Command[min(1, len(s.Command)):] {
		flag, val, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			malformed = append(malformed, a)
			continue
		}
		flags[flag] = val
	}
	return flags, malformed
}

// setting is a flag's value from the command line, else its EDGEFENCE_*
// variable (ff's precedence), else "".
func (s scaleoutService) setting(flag string) string {
	args, _ := s.args()
	if v, ok := args[flag]; ok {
		return v
	}
	return s.Environment["EDGEFENCE_"+strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))]
}

type scaleoutCompose struct {
	Name       string                     `yaml:"name"`
	Services   map[string]scaleoutService `yaml:"services"`
	Volumes    map[string]any             `yaml:"volumes"`
	Extensions map[string]any             `yaml:",inline"` // x-… anchors
}

func loadScaleout(t *testing.T) scaleoutCompose {
	t.Helper()
	var c scaleoutCompose
	dec := yaml.NewDecoder(bytes.NewReader(read(t, scaleoutFile))) // merge keys: yaml.v3 resolves them
	dec.KnownFields(true)                                          // a misspelt key fails here instead of being ignored by compose
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: %v", scaleoutFile, err)
	}
	for k := range c.Extensions {
		if !strings.HasPrefix(k, "x-") {
			t.Errorf("%s: unknown top-level key %q", scaleoutFile, k)
		}
	}
	return c
}

// nodes returns the names of the services running edgefence, sorted.
func (c scaleoutCompose) nodes() []string {
	var out []string
	for name, s := range c.Services {
		if s.edgefence() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// scaleoutTargets returns the edgefence services as service:port, the
// port being the container's --http-addr: what Prometheus scrapes.
func scaleoutTargets(t *testing.T) []string {
	t.Helper()
	c := loadScaleout(t)
	var out []string
	for _, name := range c.nodes() {
		addr := c.Services[name].setting("http-addr")
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%s: %s: --http-addr %q: %v", scaleoutFile, name, addr, err)
		}
		out = append(out, net.JoinHostPort(name, port))
	}
	if len(out) < 2 {
		t.Fatalf("%s: edgefence nodes %q: want several", scaleoutFile, out)
	}
	return out
}

// publishedPort splits a compose port mapping [IP:]HOST:CONTAINER.
func publishedPort(p string) (ip, host, container string) {
	parts := strings.Split(p, ":")
	switch len(parts) {
	case 3:
		return parts[0], parts[1], parts[2]
	case 2:
		return "", parts[0], parts[1]
	}
	return "", "", p
}

// healthcheckPort is the port the image's HEALTHCHECK probes /readyz on.
func healthcheckPort(t *testing.T) string {
	t.Helper()
	for _, in := range parseDockerfile(t, dockerfile) {
		if in.cmd != "HEALTHCHECK" {
			continue
		}
		if m := regexp.MustCompile(`http://127\.0\.0\.1:(\d+)/readyz`).FindStringSubmatch(in.args); m != nil {
			return m[1]
		}
	}
	t.Fatalf("%s: no HEALTHCHECK probing /readyz", dockerfile)
	return ""
}

// TestScaleoutCompose: the scale-out compose file runs edgefence nodes in
// issue 34's shape, each a `serve --cluster` of every NATS node with the
// flags and EDGEFENCE_* variables serve defines (ff ignores a variable
// that names no flag: a worker's EDGEFENCE_NATS or EDGEFENCE_NATS_MQTT
// would silently do nothing), reachable over MQTT on host ports of their
// own with --auth, HTTP on host loopback only, a distinct lease name
// (--name), host name and data volume each, and the partitions nats.conf
// maps.
func TestScaleoutCompose(t *testing.T) {
	flags := serveFlagNames(t)
	c := loadScaleout(t)
	dir := filepath.Dir(scaleoutFile)

	// NATS: every node named as its service (nats.conf's server_name and
	// routes), its own volume, nothing published beyond host loopback
	// (it runs without accounts), and not its MQTT side.
	conf := string(read(t, scaleoutNATSConf))
	var natsURLs []string
	for name, s := range c.Services {
		if !strings.HasPrefix(s.Image, "nats:") {
			continue
		}
		natsURLs = append(natsURLs, "nats://"+name+":4222")
		if s.Environment["NATS_NAME"] != name {
			t.Errorf("%s: NATS_NAME %q, want the service name", name, s.Environment["NATS_NAME"])
		}
		if !strings.Contains(conf, "nats-route://"+name+":6222") {
			t.Errorf("%s: %s has no route to %s", name, scaleoutNATSConf, name)
		}
		if !slices.Contains(s.Volumes, "./nats.conf:/etc/nats/nats.conf:ro") || !slices.Contains(s.Volumes, name+":/data") {
			t.Errorf("%s: volumes %q: want nats.conf and the volume %s on /data", name, s.Volumes, name)
		}
		for _, p := range s.Ports {
			ip, _, container := publishedPort(p)
			if ip != "127.0.0.1" {
				t.Errorf("%s: port %s: NATS has no accounts here, keep it on host loopback", name, p)
			}
			if container == "1883" {
				t.Errorf("%s: port %s publishes NATS's MQTT side: trackers and dashboards use the edgefence nodes", name, p)
			}
		}
	}
	slices.Sort(natsURLs)
	if len(natsURLs) < 3 {
		t.Fatalf("NATS services %q: want three for R3", natsURLs)
	}

	mapped := map[string]bool{} // the partition counts nats.conf maps to
	for _, m := range regexp.MustCompile(`partition\((\d+),`).FindAllStringSubmatch(conf, -1) {
		mapped[m[1]] = true
	}
	if len(mapped) != 1 {
		t.Fatalf("%s maps to partition counts %v: want one", scaleoutNATSConf, mapped)
	}

	nodes := c.nodes()
	if len(nodes) < 3 {
		t.Fatalf("edgefence nodes %q: want three", nodes)
	}
	hcPort := healthcheckPort(t)
	leaseNames, hostnames, dataVolumes, mqttPorts := map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	for _, name := range nodes {
		s := c.Services[name]
		if s.Build == nil {
			t.Errorf("%s: no build section", name)
		} else if abs, _ := filepath.Abs(filepath.Join(dir, s.Build.Context)); abs != mustAbs(t, repoRoot) {
			t.Errorf("%s: build context %s is not the repository root", name, s.Build.Context)
		} else if _, err := os.Stat(filepath.Join(dir, s.Build.Context, s.Build.Dockerfile)); err != nil {
			t.Errorf("%s: build dockerfile: %v", name, err)
		}
		if len(s.Command) == 0 || s.Command[0] != "serve" {
			t.Errorf("%s: command %q: want serve --cluster", name, s.Command)
			continue
		}
		args, malformed := s.args()
		if len(malformed) > 0 {
			t.Errorf("%s: arguments %q: want --flag=value", name, malformed)
		}
		for f := range args {
			if !flags[f] {
				t.Errorf("%s: --%s is not a serve flag", name, f)
			}
		}
		for k := range s.Environment {
			if !strings.HasPrefix(k, "EDGEFENCE_") || !flags[envFlag(k)] {
				t.Errorf("%s: environment %s names no serve flag", name, k)
			}
		}

		urls := strings.Split(s.setting("cluster"), ",")
		slices.Sort(urls)
		if !slices.Equal(urls, natsURLs) {
			t.Errorf("%s: --cluster %q: want every NATS node %q", name, urls, natsURLs)
		}
		for _, d := range natsURLs {
			svc := strings.TrimSuffix(strings.TrimPrefix(d, "nats://"), ":4222")
			if !slices.Contains(s.DependsOn, svc) {
				t.Errorf("%s: depends_on %q lacks %s", name, s.DependsOn, svc)
			}
		}
		if p := s.setting("partitions"); !mapped[p] {
			t.Errorf("%s: --partitions %q, but %s maps to %v", name, p, scaleoutNATSConf, mapped)
		}

		// A lease name of its own: without --name it is host-PID, and
		// PID is 1 in every container. worker.Config.Validate refuses
		// these bytes. A host name of its own too, for the logs.
		n := s.setting("name")
		if n == "" || strings.ContainsAny(n, ".*> \t") {
			t.Errorf("%s: --name %q: want one without '.', '*', '>' or spaces (the node's lease name)", name, n)
		} else if other, ok := leaseNames[n]; ok {
			t.Errorf("%s and %s share the --name %s: their leases would be one node's", name, other, n)
		}
		leaseNames[n] = name
		if other, ok := hostnames[s.Hostname]; ok || s.Hostname == "" {
			t.Errorf("%s: hostname %q: want one of its own (shared with %q)", name, s.Hostname, other)
		}
		hostnames[s.Hostname] = name

		// Its own retained store; the users and fence files from the
		// operator's config/ directory.
		var dataVol string
		mounts := map[string]string{} // target → source
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				t.Errorf("%s: volume %q", name, v)
				continue
			}
			mounts[parts[1]] = parts[0]
			if parts[1] == s.setting("data-dir") {
				dataVol = parts[0]
			}
			if !strings.HasPrefix(parts[0], ".") && !strings.HasPrefix(parts[0], "/") {
				if _, ok := c.Volumes[parts[0]]; !ok {
					t.Errorf("%s: named volume %s is not declared", name, parts[0])
				}
			}
		}
		if dataVol == "" || strings.HasPrefix(dataVol, ".") || strings.HasPrefix(dataVol, "/") {
			t.Errorf("%s: --data-dir %q is not on a named volume (%q)", name, s.setting("data-dir"), s.Volumes)
		} else if other, ok := dataVolumes[dataVol]; ok {
			t.Errorf("%s and %s share the data volume %s", name, other, dataVol)
		}
		dataVolumes[dataVol] = name
		for _, f := range []string{"auth", "fences"} {
			p := s.setting(f)
			if src, ok := mounts[filepath.Dir(p)]; p == "" || !ok || src != "./config" {
				t.Errorf("%s: --%s %q is not in the mounted ./config directory (%v)", name, f, p, mounts)
			}
		}

		// MQTT beyond loopback (so --auth), published on a host port of
		// its own; HTTP on the image's HEALTHCHECK port, published on host
		// loopback only.
		mqttHost, mqttPort, _ := net.SplitHostPort(s.setting("mqtt-addr"))
		if mqttHost != "" || s.setting("auth") == "" {
			t.Errorf("%s: --mqtt-addr %q --auth %q: want every interface, with --auth", name, s.setting("mqtt-addr"), s.setting("auth"))
		}
		_, httpPort, err := net.SplitHostPort(s.setting("http-addr"))
		if err != nil || httpPort != hcPort {
			t.Errorf("%s: --http-addr %q: want port %s, the image's HEALTHCHECK's", name, s.setting("http-addr"), hcPort)
		}
		var mqttPublished bool
		for _, p := range s.Ports {
			ip, host, container := publishedPort(p)
			switch container {
			case mqttPort:
				mqttPublished = true
				if other, ok := mqttPorts[host]; ok {
					t.Errorf("%s and %s both publish MQTT on host port %s", name, other, host)
				}
				mqttPorts[host] = name
			case httpPort:
				if ip != "127.0.0.1" {
					t.Errorf("%s: port %s: /healthz and /readyz are unauthenticated, keep HTTP on host loopback", name, p)
				}
			}
		}
		if !mqttPublished {
			t.Errorf("%s: ports %q do not publish MQTT (container port %s)", name, s.Ports, mqttPort)
		}

		if lim, ok := s.Environment["EDGEFENCE_MEMORY_LIMIT"]; !ok ||
			goBytes(t, lim)*5 > systemdBytes(t, strings.ToUpper(strings.TrimSuffix(s.MemLimit, "b")))*4 {
			t.Errorf("%s: EDGEFENCE_MEMORY_LIMIT %q is not at least 20%% below mem_limit %q", name, lim, s.MemLimit)
		}
		if d, err := time.ParseDuration(s.StopGracePeriod); err != nil || d < 20*time.Second {
			t.Errorf("%s: stop_grace_period %q: want at least 20s to hand the partitions over", name, s.StopGracePeriod)
		}
		if s.Restart != "unless-stopped" || !s.ReadOnly || !slices.Equal(s.CapDrop, []string{"ALL"}) {
			t.Errorf("%s: restart %q read_only %v cap_drop %q", name, s.Restart, s.ReadOnly, s.CapDrop)
		}
	}
}

// TestScaleoutNodeCommand runs `edgefence serve` with a scale-out node's
// command line and EDGEFENCE_* environment as compose gives them, only
// the listen ports, the files and the NATS address replaced by what
// exists here: every value must parse and the combination pass serve's
// checks (--auth beyond loopback, what goes with --cluster), so that the
// node gets as far as dialling NATS, which nothing answers here.
func TestScaleoutNodeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the broker")
	}
	bin := binary(t)
	c := loadScaleout(t)
	dir := t.TempDir()
	users := usersFile(t, bin, dir)
	fences := filepath.Join(dir, "fences.geojson")
	if err := os.WriteFile(fences, read(t, filepath.Join(repoRoot, "fences.geojson")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "nats://" + l.Addr().String()
	l.Close()

	for _, name := range c.nodes() {
		s := c.Services[name]
		var args []string
		for _, a := range s.Command {
			flag, val, _ := strings.Cut(a, "=")
			switch flag {
			case "--cluster":
				val = closed
			case "--mqtt-addr", "--http-addr":
				host, _, _ := net.SplitHostPort(val)
				val = net.JoinHostPort(host, "0") // the same interfaces
			case "--data-dir":
				val = filepath.Join(dir, name)
			case "--fences":
				val = fences
			case "--auth":
				val = users
			}
			if strings.HasPrefix(a, "--") {
				a = flag + "=" + val
			}
			args = append(args, a)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "EDGEFENCE_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		for k, v := range s.Environment {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		cancel()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != 1 || !strings.Contains(string(out), "connect to NATS "+closed) {
			t.Errorf("%s: edgefence %s: exit %d (%v), want 1 at connecting to NATS:\n%s", name, strings.Join(args, " "), code, err, out)
		}
	}
}

// usersFile writes a users file with one admin, ops, password
// not-a-real-password, hashed by edgefence passwd.
func usersFile(t *testing.T, bin, dir string) string {
	t.Helper()
	pw := exec.Command(bin, "passwd")
	pw.Stdin = strings.NewReader("not-a-real-password")
	hash, err := pw.Output()
	if err != nil {
		t.Fatalf("edgefence passwd: %v", err)
	}
	users := filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(users, fmt.Appendf(nil, "users:\n  - username: ops\n    password: %q\n    role: admin\n",
		strings.TrimSpace(string(hash))), 0o600); err != nil {
		t.Fatal(err)
	}
	return users
}

// TestPrometheusClusterJob: the shipped Prometheus configuration scrapes
// the scale-out compose file's edgefence nodes, every one of them and
// nothing else, with basic_auth (they run with --auth), as the job the
// cluster rules' unit tests name, and no cluster rule selects another
// job.
func TestPrometheusClusterJob(t *testing.T) {
	var pc promConf
	if err := yaml.Unmarshal(read(t, promConfig), &pc); err != nil {
		t.Fatal(err)
	}
	var targets []string
	found := false
	for _, sc := range pc.ScrapeConfigs {
		if sc.JobName != clusterJob {
			continue
		}
		found = true
		if sc.MetricsPath != "/metrics" {
			t.Errorf("%s: metrics_path %q", clusterJob, sc.MetricsPath)
		}
		if sc.BasicAuth == nil || sc.BasicAuth.Username == "" || sc.BasicAuth.PasswordFile == "" {
			t.Errorf("job %s has no basic_auth with a username and password_file: the nodes' /metrics needs an admin under --auth", clusterJob)
		}
		for _, s := range sc.StaticConfigs {
			targets = append(targets, s.Targets...)
		}
		for _, d := range sc.DNSSDConfigs {
			if d.Type != "A" {
				t.Errorf("%s: DNS type %q: compose's DNS answers A records", clusterJob, d.Type)
			}
			for _, n := range d.Names {
				targets = append(targets, net.JoinHostPort(n, strconv.Itoa(d.Port)))
			}
		}
	}
	if !found {
		t.Fatalf("%s has no scrape job %s", promConfig, clusterJob)
	}
	slices.Sort(targets)
	if want := scaleoutTargets(t); !slices.Equal(targets, want) {
		t.Errorf("job %s scrapes %q, want the nodes of %s: %q", clusterJob, targets, scaleoutFile, want)
	}

	groupFound := false
	for _, g := range loadAlerts(t).Groups {
		if g.Name != clusterGroup {
			continue
		}
		groupFound = true
		for _, r := range g.Rules {
			for _, m := range jobMatchers(r.Expr) {
				if m.op != "=" || m.value != clusterJob {
					t.Errorf("%s: selects job %s%q, not the scrape job %s", r.Alert, m.op, m.value, clusterJob)
				}
			}
		}
	}
	if !groupFound {
		t.Errorf("%s has no group %s", alertsFile, clusterGroup)
	}
	// The rules' unit tests feed the nodes' series under the shipped job.
	jobRe := regexp.MustCompile(`edgefence_worker_[a-z_]+\{[^}]*\bjob="([^"]*)"`)
	jobs := map[string]bool{}
	for _, m := range jobRe.FindAllStringSubmatch(string(read(t, alertsTest)), -1) {
		jobs[m[1]] = true
	}
	if !jobs[clusterJob] {
		t.Errorf("%s: no partition series under job %q (have %v)", alertsTest, clusterJob, jobs)
	}
}

// jobMatchers returns the job label matchers anywhere in a PromQL
// expression (up{…} included, which selectors leaves out).
func jobMatchers(expr string) []matcher {
	var out []matcher
	for _, m := range matcherRe.FindAllStringSubmatch(expr, -1) {
		if m[1] == "job" {
			out = append(out, matcher{m[1], m[2], m[3]})
		}
	}
	return out
}

// TestJobSelectorsCoverTheCluster: an alert outside the cluster group or
// a dashboard query that selects a job selects both the single box's and
// the scale-out nodes' (a node is a serve too: down, restarting or near
// its memory limit matters as much), and no other.
func TestJobSelectorsCoverTheCluster(t *testing.T) {
	cluster := map[string]bool{}
	for _, g := range loadAlerts(t).Groups {
		if g.Name == clusterGroup {
			for _, r := range g.Rules {
				cluster["alert "+r.Alert] = true
			}
		}
	}
	seen := 0
	for where, expr := range queries(t) {
		if cluster[where] {
			continue
		}
		for _, m := range jobMatchers(expr) {
			seen++
			ok := m.op == "=~"
			if ok {
				re, err := regexp.Compile("^(?:" + m.value + ")$")
				ok = err == nil && re.MatchString(singleJob) && re.MatchString(clusterJob) &&
					!re.MatchString("node") && !re.MatchString(singleJob+"-other")
			}
			if !ok {
				t.Errorf("%s: job%s%q: want job=~ matching %s and %s only", where, m.op, m.value, singleJob, clusterJob)
			}
		}
	}
	// Grafana's instance variable is a query of its own.
	var d struct {
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(read(t, dashboardFile), &d); err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && v.Name == "instance" {
			if !strings.Contains(q, `job=~"`+singleJob+"|"+clusterJob+`"`) {
				t.Errorf("dashboard variable instance %q: want the instances of both jobs", q)
			}
		}
	}
	if seen == 0 {
		t.Error("no alert or panel selects a job: this test checks nothing")
	}
}
