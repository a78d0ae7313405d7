package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// The login bounds of issue 21, measured on the real binary: 50 parallel
// bogus logins, over and over for a few seconds, against an Argon2id
// users file made by `edgefence passwd`'s default, while a logged-in
// device pings. It reports the broker's idle and peak RSS and the
// device's ping → transition latency idle and during the flood, and
// requires the peak within 32 MiB of the idle RSS. Timing-heavy: it runs only
// with EDGEFENCE_MEASURE=1 (scripts/loginflood; figures in
// docs/security.md).
func TestLoginFloodMeasure(t *testing.T) {
	if os.Getenv("EDGEFENCE_MEASURE") == "" {
		t.Skip("a measurement: EDGEFENCE_MEASURE=1 (scripts/loginflood)")
	}
	hash, err := auth.HashPassword([]byte("real-secret"), "argon2id")
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	body := fmt.Sprintf("users:\n  - username: truck-1\n    role: device\n    read_own_transitions: true\n    password: %q\n"+
		"  - username: victim\n    role: device\n    password: %q\n", hash, hash)
	if err := os.WriteFile(users, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, t.TempDir(), nil, "--auth", users, "--hold", "100ms")
	pid := p.cmd.Process.Pid

	conn, err := net.DialTimeout("tcp", p.mqtt, wait)
	if err != nil {
		t.Fatal(err)
	}
	dev, _, err := mqtttest.Dial(t, conn, &paho.Connect{ClientID: "truck-1", KeepAlive: 30, CleanStart: true,
		Username: "truck-1", UsernameFlag: true, Password: []byte("real-secret"), PasswordFlag: true}, wait)
	if err != nil {
		t.Fatal(err)
	}
	dev.Subscribe("geofence/+/truck-1")
	ts := time.Now().UnixMilli() - 600_000
	k := 0
	// latencies pings n times, in and out of a fence, and returns the
	// median ping → transition latency.
	latencies := func(n int) (time.Duration, []time.Duration) {
		var lat []time.Duration
		for range n {
			lat0, lon0 := museumLat, museumLon
			if k%2 == 1 {
				lat0, lon0 = outLat, outLon
			}
			k++
			ts += 1000
			t0 := time.Now()
			dev.Publish("devices/truck-1/telemetry", 1, fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, lat0, lon0, ts))
			dev.Next("a transition")
			lat = append(lat, time.Since(t0))
		}
		sorted := slices.Clone(lat)
		slices.Sort(sorted)
		return sorted[len(sorted)/2], lat
	}
	latencies(4) // warm up
	idleLat, _ := latencies(10)
	idleRSS := rssKiB(t, pid)

	stop := make(chan struct{})
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if r := rssKiB(t, pid); r > peak.Load() {
				peak.Store(r)
			}
		}
	})
	var codes [256]atomic.Int64
	var flood sync.WaitGroup
	floodFor := 5 * time.Second
	end := time.Now().Add(floodFor)
	for i := range 50 {
		flood.Go(func() {
			for n := 0; time.Now().Before(end) && n < 10_000; n++ {
				c, err := net.DialTimeout("tcp", p.mqtt, wait)
				if err != nil {
					continue
				}
				cl := paho.NewClient(paho.ClientConfig{Conn: c, PacketTimeout: wait})
				ca, _ := cl.Connect(t.Context(), &paho.Connect{ClientID: fmt.Sprint("bogus-", i, "-", n), KeepAlive: 30, CleanStart: true,
					Username: "victim", UsernameFlag: true, Password: fmt.Appendf(nil, "guess-%d-%d", i, n), PasswordFlag: true})
				if ca != nil {
					codes[ca.ReasonCode].Add(1)
				}
				c.Close()
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the flood under way
	floodLat, all := latencies(10)
	flood.Wait()
	close(stop)
	sampler.Wait()
	var summary []string
	for rc := range codes {
		if n := codes[rc].Load(); n > 0 {
			summary = append(summary, fmt.Sprintf("%#02x×%d", rc, n))
		}
	}
	t.Logf("RSS idle %d KiB, peak during the flood %d KiB (%.2f×); device ping → transition median idle %v, during the flood %v (%.2f×; all: %v); bogus logins answered %v in %v",
		idleRSS, peak.Load(), float64(peak.Load())/float64(idleRSS), idleLat.Round(time.Millisecond), floodLat.Round(time.Millisecond),
		float64(floodLat)/float64(idleLat), all, summary, floodFor)
	// The bound: one verification's memory (7 MiB) with the GC's
	// headroom, whatever the flood; before issue 21 each bogus login
	// added 64 MiB, 48 of them 4.5 GB.
	if peak.Load() >= idleRSS+32<<10 {
		t.Errorf("peak RSS %d KiB is over the idle %d KiB + 32 MiB", peak.Load(), idleRSS)
	}
}

// rssKiB is a process's resident set size.
func rssKiB(t *testing.T, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
