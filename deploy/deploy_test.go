package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peterbourgon/ff/v3"
	"gopkg.in/yaml.v3"

	"github.com/edgefence/edgefence/internal/slogtext"
	"github.com/edgefence/edgefence/internal/syncbuf"
)

// Paths, relative to this package's directory (where go test runs).
const (
	repoRoot      = ".."
	unitFile      = "systemd/edgefence.service"
	confFile      = "systemd/edgefence.conf"
	envFile       = "systemd/edgefence.env"
	dockerfile    = "container/Dockerfile"
	composeFile   = "container/compose.yaml"
	scaleoutFile  = "scaleout/compose.yaml"
	promConfig    = "prometheus/prometheus.yml"
	alertsFile    = "prometheus/alerts.yml"
	alertsTest    = "prometheus/alerts_test.yml"
	dashboardFile = "grafana/edgefence.json"
	runbookFile   = "../docs/runbook.md"
)

// serveSources define serve's flags: its own, and the process flags it
// shares with bridge and worker, and the telemetry topics.
var serveSources = []string{"../cmd/edgefence/serve.go", "../cmd/edgefence/process.go", "../ingest/topicflags.go"}

// natsSecuritySource defines natsSecurityFlags, which serve's cluster
// group registers.
const natsSecuritySource = "../cmd/edgefence/worker.go"

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveFlagNames are the flags `edgefence serve` defines, read from its
// source (fs.XxxVar(&..., "name", ...) and fs.Var(..., "name", ...)), so
// that these tests need no build; TestShippedConfigServes runs the binary.
func serveFlagNames(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`\bfs\.(?:String|Bool|Int|Int64|Uint|Uint64|Float64|Duration)?(?:Var)?\([^"\n]*?"([a-z0-9-]+)"`)
	names := map[string]bool{}
	for _, src := range serveSources {
		for _, m := range re.FindAllStringSubmatch(string(read(t, src)), -1) {
			names[m[1]] = true
		}
	}
	// The NATS security flags serve --cluster shares with worker: that
	// function's body only, not worker's own flags (--name, --nats, …).
	if !strings.Contains(string(read(t, serveSources[0])), "natsSecurityFlags(fs,") {
		t.Fatalf("%s no longer registers natsSecurityFlags: update serveFlagNames", serveSources[0])
	}
	w := string(read(t, natsSecuritySource))
	i := strings.Index(w, "\nfunc natsSecurityFlags(")
	j := strings.Index(w[max(i, 0):], "\n}\n")
	if i < 0 || j < 0 {
		t.Fatalf("%s: no func natsSecurityFlags", natsSecuritySource)
	}
	for _, m := range re.FindAllStringSubmatch(w[i:i+j], -1) {
		names[m[1]] = true
	}
	for _, must := range []string{"config", "mqtt-addr", "http-addr", "fences", "data-dir", "auth", "hold", "memory-limit", "fences-poll", "cluster", "nats-creds"} {
		if !names[must] {
			t.Fatalf("flag %q not found in %s: the flag-name pattern needs updating (found %v)", must, serveSources, names)
		}
	}
	return names
}

// ---- systemd ----

type unit map[string]map[string][]string // section → key → values in order

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	u := unit{}
	var section string
	sc := bufio.NewScanner(bytes.NewReader(read(t, path)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a key=value line in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// one returns the single value of key, failing if it is missing or set
// more than once.
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("[%s] %s: want exactly one value, got %q", section, key, vs)
	}
	return vs[0]
}

// systemdBytes parses a MemoryMax-style size (K, M, G: powers of 1024).
func systemdBytes(t *testing.T, s string) int64 {
	t.Helper()
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

// goBytes parses a --memory-limit value (bytes or KiB, MiB, GiB).
func goBytes(t *testing.T, s string) int64 {
	t.Helper()
	for suffix, mult := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("memory limit %q: %v", s, err)
			}
			return v * mult
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("memory limit %q: %v", s, err)
	}
	return v
}

// confValues reads a --config file with ff's own parser: every value of
// every flag, in order.
func confValues(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals := map[string][]string{}
	if err := ff.PlainParser(f, func(name, value string) error {
		vals[name] = append(vals[name], value)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return vals
}

func TestSystemdUnit(t *testing.T) {
	u := parseUnit(t, unitFile)
	want := map[string]string{
		"Type":                    "simple",
		"DynamicUser":             "yes",
		"StateDirectory":          "edgefence",
		"ConfigurationDirectory":  "edgefence",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"NoNewPrivileges":         "yes",
		"PrivateDevices":          "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectKernelModules":    "yes",
		"ProtectKernelLogs":       "yes",
		"ProtectControlGroups":    "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"CapabilityBoundingSet":   "",
		"AmbientCapabilities":     "",
		"Restart":                 "on-failure",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"MemorySwapMax":           "0",
	}
	for k, v := range want {
		if got := u.one(t, "Service", k); got != v {
			t.Errorf("[Service] %s=%s, want %s", k, got, v)
		}
	}
	if f := u["Service"]["SystemCallFilter"]; len(f) == 0 || f[0] != "@system-service" {
		t.Errorf("SystemCallFilter=%q: want @system-service first", f)
	}
	if got := u.one(t, "Unit", "StartLimitIntervalSec"); got != "0" {
		t.Errorf("StartLimitIntervalSec=%s: an unattended box must keep restarting the broker", got)
	}
	if got := u.one(t, "Install", "WantedBy"); got != "multi-user.target" {
		t.Errorf("WantedBy=%s", got)
	}

	// ExecStart gives --config only, and the file sits in the
	// ConfigurationDirectory: everything else is settable in the file or
	// the environment file.
	exec := strings.Fields(u.one(t, "Service", "ExecStart"))
	const conf = "/etc/edgefence/edgefence.conf"
	if !slices.Equal(exec, []string{"/usr/local/bin/edgefence", "serve", "--config", conf}) {
		t.Errorf("ExecStart=%q: want /usr/local/bin/edgefence serve --config %s", exec, conf)
	}
	if got := u.one(t, "Service", "EnvironmentFile"); got != "-/etc/edgefence/edgefence.env" {
		t.Errorf("EnvironmentFile=%s", got)
	}

	// The shipped config's paths are the unit's directories.
	c := confValues(t, confFile)
	state := "/var/lib/" + u.one(t, "Service", "StateDirectory")
	if got := c["data-dir"]; !slices.Equal(got, []string{state}) {
		t.Errorf("config data-dir %q, want the StateDirectory %s", got, state)
	}
	if got := u.one(t, "Service", "WorkingDirectory"); got != state {
		t.Errorf("WorkingDirectory=%s, want %s (relative paths must land somewhere writable)", got, state)
	}
	if got := c["fences"]; len(got) != 1 || !strings.HasPrefix(got[0], "/etc/"+u.one(t, "Service", "ConfigurationDirectory")+"/") {
		t.Errorf("config fences %q: want a file in the ConfigurationDirectory", got)
	}
	creds := map[string]bool{}
	for _, lc := range u["Service"]["LoadCredential"] {
		name, path, ok := strings.Cut(lc, ":")
		if !ok || !strings.HasPrefix(path, "/etc/edgefence/") {
			t.Errorf("LoadCredential=%s: want NAME:/etc/edgefence/FILE", lc)
		}
		creds["/run/credentials/edgefence.service/"+name] = true
	}
	if got := c["auth"]; len(got) != 1 || !creds[got[0]] {
		t.Errorf("config auth %q: want a credential the unit loads (%v)", got, creds)
	}
	if got := c["mqtt-addr"]; len(got) != 1 || got[0] != ":1883" {
		t.Errorf("config mqtt-addr %q: want :1883", got)
	}

	// Memory: the Go soft limit sits well below the cgroup's hard limit.
	memMax := systemdBytes(t, u.one(t, "Service", "MemoryMax"))
	soft := goBytes(t, c["memory-limit"][0])
	if soft*5 > memMax*4 {
		t.Errorf("memory-limit %d is not at least 20%% below MemoryMax %d", soft, memMax)
	}

	// Shutdown: the stop timeout covers the flush and --close-timeout.
	stop, err := time.ParseDuration(u.one(t, "Service", "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	closeTimeout := 10 * time.Second
	if v := c["close-timeout"]; len(v) > 0 {
		if closeTimeout, err = time.ParseDuration(v[0]); err != nil {
			t.Fatal(err)
		}
	}
	if stop < 2*closeTimeout {
		t.Errorf("TimeoutStopSec=%v: want at least twice --close-timeout (%v)", stop, closeTimeout)
	}

	// Sockets: at least --max-connections (default 100000) plus files.
	nofile, err := strconv.Atoi(u.one(t, "Service", "LimitNOFILE"))
	if err != nil || nofile <= 100_000 {
		t.Errorf("LimitNOFILE=%d (%v): want more than the default --max-connections", nofile, err)
	}
}

// TestSystemdAnalyze runs systemd-analyze verify (and its offline security
// review) on the unit when systemd is installed, with ExecStart pointing
// at a real file so that only genuine problems are reported.
func TestSystemdAnalyze(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "edgefence")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	u := strings.ReplaceAll(string(read(t, unitFile)), "/usr/local/bin/edgefence", fake)
	path := filepath.Join(dir, "edgefence.service")
	if err := os.WriteFile(path, []byte(u), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Exposure 0–100 (printed as 0.0–10.0); the unit scores 1.4 with
	// systemd 252. A broker needs the network, so it never reaches 0.
	out, err = exec.Command(sa, "security", "--offline=yes", "--threshold=20", path).CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Errorf("systemd-analyze security: %v: %s", err, lines[len(lines)-1])
	}
}

func TestConfigFileFlags(t *testing.T) {
	flags := serveFlagNames(t)
	// Active lines, through ff's parser.
	for name := range confValues(t, confFile) {
		if !flags[name] {
			t.Errorf("%s: %q is not a serve flag", confFile, name)
		}
	}
	// Commented examples (`#flag value`, no space after #) must be valid
	// once uncommented.
	for n, line := range strings.Split(string(read(t, confFile)), "\n") {
		if len(line) > 1 && line[0] == '#' && line[1] >= 'a' && line[1] <= 'z' {
			name, _, _ := strings.Cut(line[1:], " ")
			if !flags[name] {
				t.Errorf("%s:%d: example %q is not a serve flag", confFile, n+1, name)
			}
		}
	}
	// The environment file: EDGEFENCE_<FLAG>, active or commented out.
	envRe := regexp.MustCompile(`^#?\s*(EDGEFENCE_[A-Z0-9_]+)=(.*)$`)
	seen := 0
	for n, line := range strings.Split(string(read(t, envFile)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := envRe.FindStringSubmatch(line)
		if m == nil {
			if !strings.HasPrefix(line, "#") {
				t.Errorf("%s:%d: not an assignment or comment: %q", envFile, n+1, line)
			}
			continue
		}
		seen++
		if name := envFlag(m[1]); !flags[name] {
			t.Errorf("%s:%d: %s names no serve flag (%q)", envFile, n+1, m[1], name)
		}
	}
	if seen == 0 {
		t.Errorf("%s: no EDGEFENCE_* examples", envFile)
	}
}

// envFlag maps EDGEFENCE_SKEW_TOLERANCE to skew-tolerance.
func envFlag(v string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(v, "EDGEFENCE_")), "_", "-")
}

// ---- container ----

type instruction struct {
	cmd, args string
	line      int
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	start := 0
	for n, line := range strings.Split(string(read(t, path)), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n + 1
		}
		if strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args), start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s: dangling line continuation", path)
	}
	return out
}

func TestDockerfile(t *testing.T) {
	flags := serveFlagNames(t)
	ins := parseDockerfile(t, dockerfile)
	var froms []string
	byCmd := map[string][]string{}
	for _, in := range ins {
		byCmd[in.cmd] = append(byCmd[in.cmd], in.args)
		if in.cmd == "FROM" {
			froms = append(froms, in.args)
		}
	}
	if len(froms) != 2 || !strings.Contains(froms[0], "golang:1.26 AS build") ||
		!strings.HasPrefix(froms[1], "gcr.io/distroless/static-debian12:nonroot") {
		t.Errorf("FROM %q: want a golang:1.26 build stage and a distroless nonroot runtime", froms)
	}
	run := strings.Join(byCmd["RUN"], "\n")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/edgefence", "./deploy/container/healthcheck"} {
		if !strings.Contains(run, want) {
			t.Errorf("RUN lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "deploy/container/healthcheck/main.go")); err != nil {
		t.Error(err)
	}
	if u := byCmd["USER"]; len(u) != 1 || strings.HasPrefix(u[0], "0") || strings.HasPrefix(u[0], "root") {
		t.Errorf("USER %q: want a non-root user", u)
	}
	if v := byCmd["VOLUME"]; !slices.Equal(v, []string{"/var/lib/edgefence"}) {
		t.Errorf("VOLUME %q", v)
	}
	if e := byCmd["EXPOSE"]; !slices.Equal(e, []string{"1883 8883 9090"}) {
		t.Errorf("EXPOSE %q", e)
	}
	var entry, cmd []string
	if err := json.Unmarshal([]byte(byCmd["ENTRYPOINT"][0]), &entry); err != nil {
		t.Fatalf("ENTRYPOINT is not an exec-form JSON array: %v", err)
	}
	if err := json.Unmarshal([]byte(byCmd["CMD"][0]), &cmd); err != nil {
		t.Fatalf("CMD is not an exec-form JSON array: %v", err)
	}
	if !slices.Equal(entry, []string{"/usr/local/bin/edgefence"}) || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("ENTRYPOINT %q CMD %q: want edgefence serve ...", entry, cmd)
	}
	set := map[string]string{}
	for _, a := range cmd[1:] {
		name, val, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") || !flags[name] {
			t.Errorf("CMD argument %q: want --flag=value of a serve flag", a)
		}
		set[name] = val
	}
	// Listening beyond loopback needs --auth (or --allow-anonymous).
	if set["mqtt-addr"] != ":1883" || set["auth"] == "" {
		t.Errorf("CMD %q: want --mqtt-addr=:1883 with --auth", cmd)
	}
	if set["data-dir"] != "/var/lib/edgefence" {
		t.Errorf("CMD data-dir %q is not the VOLUME", set["data-dir"])
	}
	_, httpPort, _ := net.SplitHostPort(set["http-addr"])
	hc := strings.Join(byCmd["HEALTHCHECK"], " ")
	if !strings.Contains(hc, `CMD ["/usr/local/bin/edgefence-healthcheck", "http://127.0.0.1:`+httpPort+`/readyz"]`) {
		t.Errorf("HEALTHCHECK %q does not probe /readyz on the --http-addr port %s", hc, httpPort)
	}
	if s := byCmd["STOPSIGNAL"]; !slices.Equal(s, []string{"SIGTERM"}) {
		t.Errorf("STOPSIGNAL %q", s)
	}
}

func TestCompose(t *testing.T) {
	flags := serveFlagNames(t)
	var c struct {
		Services map[string]struct {
			Build *struct {
				Context    string `yaml:"context"`
				Dockerfile string `yaml:"dockerfile"`
			} `yaml:"build"`
			Image            string            `yaml:"image"`
			Command          []string          `yaml:"command"`
			Volumes          []string          `yaml:"volumes"`
			Ports            []string          `yaml:"ports"`
			Environment      map[string]string `yaml:"environment"`
			MemLimit         string            `yaml:"mem_limit"`
			StopGracePeriod  string            `yaml:"stop_grace_period"`
			Restart          string            `yaml:"restart"`
			DependsOn        []string          `yaml:"depends_on"`
			ReadOnly         bool              `yaml:"read_only"`
			CapDrop          []string          `yaml:"cap_drop"`
			SecurityOpt      []string          `yaml:"security_opt"`
			Ulimits          map[string]any    `yaml:"ulimits"`
			MemswapLimit     string            `yaml:"memswap_limit"`
			HealthcheckUnset any               `yaml:"healthcheck"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
		Name    string         `yaml:"name"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(read(t, composeFile)))
	dec.KnownFields(true) // a misspelt key fails here instead of being ignored by compose
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	dir := filepath.Dir(composeFile)
	ef, ok := c.Services["edgefence"]
	if !ok || ef.Build == nil {
		t.Fatal("no edgefence service with a build section")
	}
	if _, err := os.Stat(filepath.Join(dir, ef.Build.Context, ef.Build.Dockerfile)); err != nil {
		t.Errorf("build context/dockerfile: %v", err)
	}
	if abs, _ := filepath.Abs(filepath.Join(dir, ef.Build.Context)); abs != mustAbs(t, repoRoot) {
		t.Errorf("build context %s is not the repository root", ef.Build.Context)
	}
	for k := range ef.Environment {
		if !strings.HasPrefix(k, "EDGEFENCE_") || !flags[envFlag(k)] {
			t.Errorf("edgefence environment %s names no serve flag", k)
		}
	}
	if lim, ok := ef.Environment["EDGEFENCE_MEMORY_LIMIT"]; !ok ||
		goBytes(t, lim)*5 > systemdBytes(t, strings.ToUpper(strings.TrimSuffix(ef.MemLimit, "b")))*4 {
		t.Errorf("EDGEFENCE_MEMORY_LIMIT %q is not at least 20%% below mem_limit %q", lim, ef.MemLimit)
	}
	if d, err := time.ParseDuration(ef.StopGracePeriod); err != nil || d < 20*time.Second {
		t.Errorf("stop_grace_period %q: want at least 20s for the shutdown flush", ef.StopGracePeriod)
	}
	if !slices.Contains(ef.Volumes, "edgefence-data:/var/lib/edgefence") {
		t.Errorf("edgefence volumes %q: want the named volume on /var/lib/edgefence", ef.Volumes)
	}
	for _, p := range ef.Ports {
		if strings.HasSuffix(p, ":9090") && !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %s: the unauthenticated HTTP port must stay on host loopback", p)
		}
	}
	pr, ok := c.Services["prometheus"]
	if !ok {
		t.Fatal("no prometheus service")
	}
	mounted := map[string]string{} // target → source
	for _, v := range pr.Volumes {
		parts := strings.Split(v, ":")
		// config/ is the operator's (its header says what goes there).
		if strings.HasPrefix(parts[0], ".") && !strings.HasPrefix(parts[0], "./config/") {
			if _, err := os.Stat(filepath.Join(dir, parts[0])); err != nil {
				t.Errorf("prometheus volume %s: %v", v, err)
			}
		}
		if len(parts) > 1 {
			mounted[parts[1]] = parts[0]
		}
	}
	if mounted["/etc/prometheus/prometheus.yml"] != "../prometheus/prometheus.yml" {
		t.Errorf("prometheus.yml not mounted at /etc/prometheus/prometheus.yml: %v", mounted)
	}
	if !slices.Contains(pr.Command, "--config.file=/etc/prometheus/prometheus.yml") {
		t.Errorf("prometheus command %q", pr.Command)
	}
	for _, rf := range promRuleFiles(t) {
		target := filepath.Join("/etc/prometheus", rf)
		if src, ok := mounted[target]; !ok || filepath.Base(src) != filepath.Base(rf) {
			t.Errorf("rule file %s (in prometheus.yml) is not mounted at %s", rf, target)
		}
	}
	if pf := promPasswordFile(t); pf != "" {
		if _, ok := mounted[pf]; !ok {
			t.Errorf("basic_auth password_file %s (in prometheus.yml) is not mounted", pf)
		}
	}
	for _, v := range append(ef.Volumes, pr.Volumes...) {
		name, _, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "/") {
			if _, ok := c.Volumes[name]; !ok {
				t.Errorf("named volume %s is not declared", name)
			}
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ---- Prometheus ----

type promConf struct {
	Global struct {
		ScrapeInterval     string `yaml:"scrape_interval"`
		EvaluationInterval string `yaml:"evaluation_interval"`
	} `yaml:"global"`
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName     string `yaml:"job_name"`
		MetricsPath string `yaml:"metrics_path"`
		BasicAuth   *struct {
			Username     string `yaml:"username"`
			PasswordFile string `yaml:"password_file"`
		} `yaml:"basic_auth"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
		DNSSDConfigs []struct {
			Names []string `yaml:"names"`
			Type  string   `yaml:"type"`
			Port  int      `yaml:"port"`
		} `yaml:"dns_sd_configs"`
	} `yaml:"scrape_configs"`
}

// promPasswordFile is the edgefence job's basic_auth password file, or "".
func promPasswordFile(t *testing.T) string {
	t.Helper()
	var pc promConf
	if err := yaml.Unmarshal(read(t, promConfig), &pc); err != nil {
		t.Fatal(err)
	}
	for _, sc := range pc.ScrapeConfigs {
		if sc.JobName == "edgefence" && sc.BasicAuth != nil {
			return sc.BasicAuth.PasswordFile
		}
	}
	return ""
}

func promRuleFiles(t *testing.T) []string {
	t.Helper()
	var pc promConf
	if err := yaml.Unmarshal(read(t, promConfig), &pc); err != nil {
		t.Fatal(err)
	}
	return pc.RuleFiles
}

func TestPrometheusConfig(t *testing.T) {
	var pc promConf
	dec := yaml.NewDecoder(bytes.NewReader(read(t, promConfig)))
	dec.KnownFields(true)
	if err := dec.Decode(&pc); err != nil {
		t.Fatalf("%s: %v", promConfig, err)
	}
	for _, rf := range pc.RuleFiles {
		if _, err := os.Stat(filepath.Join(filepath.Dir(promConfig), rf)); err != nil {
			t.Errorf("rule file: %v", err)
		}
	}
	if !slices.Contains(pc.RuleFiles, filepath.Base(alertsFile)) {
		t.Errorf("rule_files %q lacks %s", pc.RuleFiles, filepath.Base(alertsFile))
	}
	found := false
	for _, sc := range pc.ScrapeConfigs {
		if sc.JobName != "edgefence" { // the alerts select job="edgefence"
			continue
		}
		found = true
		if sc.MetricsPath != "/metrics" {
			t.Errorf("metrics_path %q", sc.MetricsPath)
		}
		// The image runs with --auth, where /metrics needs an admin.
		if sc.BasicAuth == nil || sc.BasicAuth.Username == "" || sc.BasicAuth.PasswordFile == "" {
			t.Errorf("job edgefence has no basic_auth with a username and password_file: /metrics needs an admin under --auth")
		}
		for _, s := range sc.StaticConfigs {
			for _, tg := range s.Targets {
				if tg != "edgefence:9090" {
					t.Errorf("target %q: want the compose service edgefence on the image's --http-addr port", tg)
				}
			}
		}
	}
	if !found {
		t.Error("no scrape job named edgefence")
	}
}

type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func loadAlerts(t *testing.T) rulesFile {
	t.Helper()
	var rf rulesFile
	dec := yaml.NewDecoder(bytes.NewReader(read(t, alertsFile)))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	return rf
}

func TestAlertRules(t *testing.T) {
	rf := loadAlerts(t)
	runbook := string(read(t, runbookFile))
	names := map[string]bool{}
	var all []string
	for _, g := range rf.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: want a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			all = append(all, r.Alert)
			if r.Alert == "" || r.Record != "" {
				t.Errorf("group %s: a rule that is not an alert: %+v", g.Name, r)
				continue
			}
			if names[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			names[r.Alert] = true
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: empty expr", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
				t.Errorf("%s: severity %q", r.Alert, s)
			}
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[k] == "" {
					t.Errorf("%s: no %s annotation", r.Alert, k)
				}
			}
			anchor := strings.ToLower(r.Alert)
			if want := "https://github.com/edgefence/edgefence/blob/main/docs/runbook.md#" + anchor; r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			if !regexp.MustCompile(`(?m)^#+ ` + r.Alert + `\s*$`).MatchString(runbook) {
				t.Errorf("%s: %s has no section headed %q", r.Alert, runbookFile, r.Alert)
			}
		}
	}
	for _, must := range []string{
		"EdgefenceDown", "EdgefenceReversalRateHigh", "EdgefenceLatePingsHigh", "EdgefenceRejectedHigh",
		"EdgefenceShedding", "EdgefenceRefusing", "EdgefenceWatermarkLagGrowing", "EdgefenceBufferedPingsHigh",
		"EdgefencePublishLatencyHigh", "EdgefenceFenceReloadFailed", "EdgefenceRateLimited",
	} {
		if !names[must] {
			t.Errorf("no alert %s (have %v)", must, all)
		}
	}
}

// ---- metric names ----

// selector is one metric selector of a PromQL expression.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

var (
	selectorRe = regexp.MustCompile(`\b((?:edgefence|go|process)_[a-zA-Z0-9_]+)\s*(\{[^}]*\})?`)
	matcherRe  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

func selectors(expr string) []selector {
	var out []selector
	for _, m := range selectorRe.FindAllStringSubmatch(expr, -1) {
		s := selector{name: m[1]}
		for _, mm := range matcherRe.FindAllStringSubmatch(m[2], -1) {
			v, err := strconv.Unquote(`"` + mm[3] + `"`)
			if err != nil {
				v = mm[3]
			}
			s.matchers = append(s.matchers, matcher{mm[1], mm[2], v})
		}
		out = append(out, s)
	}
	return out
}

// queries returns every PromQL expression the deploy files hold: alert
// rules and dashboard panels (with Grafana's variables substituted).
func queries(t *testing.T) map[string]string {
	t.Helper()
	q := map[string]string{}
	for _, g := range loadAlerts(t).Groups {
		for _, r := range g.Rules {
			q["alert "+r.Alert] = r.Expr
		}
	}
	for _, p := range dashboardPanels(t) {
		for _, tg := range p.Targets {
			expr := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*").Replace(tg.Expr)
			q[fmt.Sprintf("panel %q %s", p.Title, tg.RefID)] = expr
		}
	}
	return q
}

// registeredNames are the edgefence_ metric names in the module's non-test
// Go sources: what the code can register.
func registeredNames(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`edgefence_[a-z0-9_]+`)
	names := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "dist", "testdata", "deploy", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAll(b, -1) {
			names[string(m)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestMetricNamesInSource checks, without running anything, that every
// edgefence_ metric an alert or panel queries appears in the Go sources:
// renaming a metric breaks this test. TestShippedConfigServes checks the
// same against a live /metrics, labels included.
func TestMetricNamesInSource(t *testing.T) {
	reg := registeredNames(t)
	for where, expr := range queries(t) {
		for _, s := range selectors(expr) {
			if !strings.HasPrefix(s.name, "edgefence_") {
				continue
			}
			base := s.name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(s.name, suffix); ok && reg[b] {
					base = b
				}
			}
			if !reg[base] {
				t.Errorf("%s: metric %s is not registered anywhere in the Go sources", where, s.name)
			}
		}
	}
}

// ---- Grafana ----

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	GridPos *struct{ X, Y, W, H int } `json:"gridPos"`
}

func dashboardPanels(t *testing.T) []panel {
	t.Helper()
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(read(t, dashboardFile), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d.Panels
}

func TestGrafanaDashboard(t *testing.T) {
	var d struct {
		UID           string  `json:"uid"`
		Title         string  `json:"title"`
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
	}
	b := read(t, dashboardFile)
	if !json.Valid(b) {
		t.Fatalf("%s is not valid JSON", dashboardFile)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("uid %q title %q schemaVersion %d", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	if vars["datasource"] != "datasource" || vars["instance"] != "query" {
		t.Errorf("templating %v: want a datasource variable and an instance query", vars)
	}
	ids := map[int]bool{}
	queriesSeen := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: bad gridPos %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			queriesSeen++
			if strings.TrimSpace(tg.Expr) == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target %+v: want an expr and a unique refId", p.Title, tg)
			}
			refs[tg.RefID] = true
		}
	}
	// The dashboard covers the main figures.
	all := string(b)
	for _, m := range []string{
		"edgefence_pings_received_total", "edgefence_transitions_total", "edgefence_transition_reversals_total",
		"edgefence_late_total", "edgefence_rejected_total", "edgefence_shed_total", "edgefence_watermark_lag_seconds_bucket",
		"edgefence_publish_latency_seconds_bucket", "edgefence_active_devices", "edgefence_buffered_pings",
		"edgefence_mqtt_clients_connected",
	} {
		if !strings.Contains(all, m) {
			t.Errorf("dashboard does not query %s", m)
		}
	}
	t.Logf("%d panels, %d queries", len(d.Panels), queriesSeen)
}

// ---- promtool ----

// TestPromtool checks the config, the rules and the dashboard's
// expressions with Prometheus' own parser, and runs the alert unit tests
// (deploy/prometheus/alerts_test.yml), when promtool is installed
// (Debian: apt-get install prometheus).
func TestPromtool(t *testing.T) {
	pt, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed under CI, which installs it (.ci/run)")
		}
		t.Skip("promtool not installed (Debian: apt-get install prometheus; .ci/run installs it): the alert unit tests did not run")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(pt, args...)
		cmd.Dir = filepath.Dir(promConfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("check", "config", filepath.Base(promConfig))
	run("check", "rules", filepath.Base(alertsFile))
	run("test", "rules", filepath.Base(alertsTest))

	// The dashboard's queries, as recording rules: promtool parses each.
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, p := range dashboardPanels(t) {
		for _, tg := range p.Targets {
			expr := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*").Replace(tg.Expr)
			q, _ := json.Marshal(expr) // a JSON string is a YAML string
			fmt.Fprintf(&b, "      - record: dashboard:panel%d_%s\n        expr: %s\n", i, tg.RefID, q)
		}
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run("check", "rules", f)
}

// ---- the shipped configuration, live ----

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/edgefence once for the tests that run it.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go command is needed to build cmd/edgefence: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "edgefence-deploy-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "edgefence")
		cmd := exec.Command(goTool, "build", "-o", binPath, "./cmd/edgefence")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/edgefence: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// exposition is a parsed /metrics page: name → label sets.
type exposition map[string][]map[string]string

var sampleRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+\S+`)

func parseExposition(text string) exposition {
	e := exposition{}
	for _, line := range strings.Split(text, "\n") {
		m := sampleRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, lm := range matcherRe.FindAllStringSubmatch(m[2], -1) {
			labels[lm[1]] = lm[3]
		}
		e[m[1]] = append(e[m[1]], labels)
	}
	return e
}

// has reports whether some series of s.name satisfies every matcher on a
// label the broker sets (job and instance come from Prometheus).
func (e exposition) has(s selector) error {
	series, ok := e[s.name]
	if !ok {
		return fmt.Errorf("no metric %s on /metrics", s.name)
	}
	for _, lbls := range series {
		ok := true
		for _, m := range s.matchers {
			if m.label == "job" || m.label == "instance" {
				continue
			}
			v := lbls[m.label]
			switch m.op {
			case "=":
				ok = ok && v == m.value
			case "!=":
				ok = ok && v != m.value
			case "=~", "!~":
				re, err := regexp.Compile("^(?:" + m.value + ")$")
				if err != nil {
					return err
				}
				ok = ok && re.MatchString(v) == (m.op == "=~")
			}
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("no series of %s matches %v (have %v)", s.name, s.matchers, series)
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestShippedConfigServes runs `edgefence serve --config` with the shipped
// edgefence.conf, overriding on the command line only what exists on a
// real box alone (addresses, paths, the credential), and checks that it
// gets ready, that every metric and label the alerts and dashboard query is
// on its /metrics, that SIGHUP reloads the fences (ExecReload), and that
// SIGTERM stops it cleanly within the unit's TimeoutStopSec.
func TestShippedConfigServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the broker")
	}
	bin := binary(t)
	dir := t.TempDir()

	users := usersFile(t, bin, dir)
	fences := filepath.Join(dir, "fences.geojson")
	if err := os.WriteFile(fences, read(t, filepath.Join(repoRoot, "fences.geojson")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Port 0: the test reads the HTTP address from serve's log, so no other
	// process can take a port between a pick and serve's bind.
	cmd := exec.Command(bin, "serve", "--config", confFile,
		"--mqtt-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--auth", users, "--fences", fences, "--data-dir", filepath.Join(dir, "data"),
		"--capture", filepath.Join(dir, "capture.jsonl")) // registers the capture metrics
	cmd.Env = os.Environ()
	var logs syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("serve output:\n%s", logs.String())
		}
	}()

	base := ""
	deadline := time.Now().Add(20 * time.Second)
	for {
		if base == "" {
			if a, ok := slogtext.Find(logs.String(), "edgefence serving"); ok {
				base = "http://" + a["http"]
			}
		}
		code, err := 0, errors.New("serve has not logged its addresses")
		if base != "" {
			code, _, err = get(base + "/readyz")
		}
		if err == nil && code == http.StatusOK {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("serve exited before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 20s: %d %v", code, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _, err := get(base + "/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("/healthz: %d %v", code, err)
	}

	// With --auth, /metrics needs an admin (Prometheus' basic_auth).
	metricsURL := strings.Replace(base, "http://", "http://ops:not-a-real-password@", 1) + "/metrics"
	if code, _, err := get(base + "/metrics"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("anonymous /metrics under --auth: %d %v, want 401", code, err)
	}
	scrape := func() exposition {
		t.Helper()
		code, body, err := get(metricsURL)
		if err != nil || code != http.StatusOK {
			t.Fatalf("/metrics: %d %v", code, err)
		}
		return parseExposition(body)
	}
	e := scrape()
	for where, expr := range queries(t) {
		for _, s := range selectors(expr) {
			if strings.HasPrefix(s.name, "edgefence_worker_") {
				continue // a scale-out worker's: worker's TestWorkerMetricsAlertsQuery checks them live
			}
			if err := e.has(s); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}

	// ExecReload: SIGHUP reloads the fences file.
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ok := selector{"edgefence_fence_reloads_total", []matcher{{"result", "=", "ok"}}}
	for deadline := time.Now().Add(5 * time.Second); ; {
		_, body, _ := get(metricsURL)
		if strings.Contains(body, `edgefence_fence_reloads_total{result="ok"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reload the fences: %v", scrape().has(ok))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// systemctl stop: SIGTERM, a clean exit well within TimeoutStopSec.
	stopTimeout, err := time.ParseDuration(parseUnit(t, unitFile).one(t, "Service", "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Fatalf("SIGTERM: exit %v, want 0", err)
		}
		t.Logf("stopped in %v (TimeoutStopSec %v)", time.Since(start).Round(time.Millisecond), stopTimeout)
	case <-time.After(stopTimeout):
		t.Fatalf("still running %v after SIGTERM", stopTimeout)
	}
}
