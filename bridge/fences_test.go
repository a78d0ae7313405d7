package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SIGHUP's reload, as serve's: a device inside a fence that the new file
// no longer has gets its EXIT now; a broken file changes nothing.
func TestReloadFences(t *testing.T) {
	m := startMosquitto(t)
	raw, err := os.ReadFile(filepath.Join("..", "fences.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, m.url())
	cfg.Fences = path
	b := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#")
	tr := connectTracker(t, m.addr(), "", "")
	tr.ping("truck-1", museumLat, museumLon, time.Now().UnixMilli()-1000)
	o.waitTransitions("geofence", 1)

	if err := os.WriteFile(path, []byte("{not geojson"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadFences(); err == nil {
		t.Fatal("a broken fence file was accepted")
	}
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil {
		t.Fatal(err)
	}
	kept := fc.Features[:0]
	for _, f := range fc.Features {
		if !strings.Contains(string(f), `"zone-museumsinsel"`) {
			kept = append(kept, f)
		}
	}
	fc.Features = kept
	out, _ := json.Marshal(fc)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.ReloadFences(); err != nil {
		t.Fatal(err)
	}
	got := o.waitTransitions("geofence", 2)
	if !strings.HasPrefix(got[1], "truck-1 zone-museumsinsel EXIT ") {
		t.Errorf("after the fence was removed: %q, want its EXIT", got)
	}
	if s := metricsText(t, b); !strings.Contains(s, `edgefence_fence_reloads_total{result="ok"} 1`) || !strings.Contains(s, `edgefence_fence_reloads_total{result="error"} 1`) {
		t.Errorf("reload counters wrong:\n%s", s)
	}
}
