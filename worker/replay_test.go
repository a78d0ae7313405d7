package worker_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/checkpoint"
)

// TestStaleCheckpointReplay: a partition replayed from a checkpoint whose
// later outputs are still within --dedup-window publishes nothing twice
// and raises nothing; replayed from the same checkpoint once those
// outputs have left the window, the worker logs an ERROR and counts it in
// edgefence_worker_stale_replays_total, and the repeat it warns of is in
// the history stream.
func TestStaleCheckpointReplay(t *testing.T) {
	js, base, logs := onePartition(t)
	base.DedupWindow = 6 * time.Second // the least Validate allows with these
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	owned := 0
	start := func(name string) *worker.Worker {
		t.Helper()
		cfg := base
		cfg.Name = name
		w, err := worker.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		waitOwnedAll(t, w, 1)
		// Owned is the lease; the replay check comes before the
		// partition's "partition owned" line.
		owned++
		for i := 0; strings.Count(logs.String(), `msg="partition owned"`) < owned; i++ {
			if i == 300 {
				t.Fatalf("the partition did not start:\n%s", logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		return w
	}
	stop := func(w *worker.Worker) {
		t.Helper()
		waitQuiet(t, js, 2*time.Second)
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	enters := func() int {
		n := 0
		for _, r := range historyOf(t, js) {
			if r.topic == "geofence/c/dev-1" && strings.Contains(r.body, `"type":"ENTER"`) {
				n++
			}
		}
		return n
	}

	// A checkpoint from before dev-1's ENTER: a ping outside every fence.
	w := start("w1")
	store, err := checkpoint.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	tracker, dash := mqttClient(t, "tracker", base.MQTT), mqttClient(t, "dash", base.MQTT)
	if tok := tracker.Publish("devices/dev-1/telemetry", 1, false,
		fmt.Sprintf(`{"lat":52.5,"lon":13.3000,"ts":%d}`, time.Now().UnixMilli())); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	var old []byte
	for range 300 {
		if seq, err := checkpoint.Seq(ctx, js, 0); err == nil && seq > 0 {
			old, _ = store.Saved(ctx, 0)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if old == nil {
		t.Fatalf("no checkpoint was saved:\n%s", logs.String())
	}
	expectEnter(t, tracker, dash, "dev-1")
	stop(w)

	staleReplays := func(w *worker.Worker) string {
		t.Helper()
		resp, err := http.Get("http://" + w.HTTPAddr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "edgefence_worker_stale_replays_total "); ok {
				return v
			}
		}
		t.Fatalf("no edgefence_worker_stale_replays_total in /metrics")
		return ""
	}
	restoreOld := func() {
		t.Helper()
		if err := store.Restore(ctx, 0, old); err != nil {
			t.Fatal(err)
		}
	}

	// Within the window: the replay's ENTER is dropped as a duplicate.
	restoreOld()
	w = start("w2")
	checkAlertMetrics(t, w.HTTPAddr())
	if got := staleReplays(w); got != "0" {
		t.Errorf("a replay within the window counted as stale: %s", got)
	}
	stop(w)
	if n := enters(); n != 1 {
		t.Fatalf("%d ENTERs of dev-1 recorded after a replay within the window, want 1", n)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("an error logged for a replay within the window:\n%s", logs.String())
	}

	// Past it: the same replay records the ENTER again, and says so.
	time.Sleep(base.DedupWindow)
	restoreOld()
	w = start("w3")
	if got := staleReplays(w); got != "1" {
		t.Errorf("edgefence_worker_stale_replays_total %s after a replay past the window, want 1", got)
	}
	stop(w)
	if n := enters(); n != 2 {
		t.Errorf("%d ENTERs of dev-1 recorded after a replay past the window, want the 2 the error warns of", n)
	}
	if !strings.Contains(logs.String(), `level=ERROR msg="replay from a checkpoint older than the duplicate window`) {
		t.Errorf("no error logged for a replay past the window:\n%s", logs.String())
	}
}

// checkAlertMetrics: every worker metric the shipped alert rules query is
// on a live worker's /metrics, with the label values they select
// (deploy's TestShippedConfigServes checks serve's alike).
func checkAlertMetrics(t *testing.T, addr string) {
	t.Helper()
	rules, err := os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	exposed := string(b)
	sel := regexp.MustCompile(`(edgefence_worker_[a-z_]+)(\{[^}]*\})?`)
	pairs := regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
	n := 0
	for _, m := range sel.FindAllStringSubmatch(string(rules), -1) {
		n++
		lines := regexp.MustCompile(`(?m)^`+m[1]+`(\{.*\})? `).FindAllString(exposed, -1)
		if len(lines) == 0 {
			t.Errorf("alerts.yml queries %s, which a worker does not expose", m[1])
			continue
		}
		for _, p := range pairs.FindAllStringSubmatch(m[2], -1) {
			want := p[1] + `="` + p[2] + `"`
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }) {
				t.Errorf("alerts.yml selects %s{%s}, which a worker does not expose", m[1], want)
			}
		}
	}
	if n < 5 {
		t.Errorf("alerts.yml queries %d worker metrics", n)
	}
}
