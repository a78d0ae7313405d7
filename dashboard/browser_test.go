package dashboard_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// chromium returns the browser the page tests drive. Without one they
// skip, but not under CI (CI=true), which installs it (.ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: CI installs it (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium); CI runs this test")
	return ""
}

// browser starts a headless Chromium for one test, bounded by limit in
// all, and returns a tab's context.
func browser(t *testing.T, limit time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		tcancel()
		acancel()
		cancel()
	})
	if err := chromedp.Do(tab); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

// until waits, at most within, for the JavaScript condition to hold.
func until(t *testing.T, tab context.Context, within time.Duration, what, cond string) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(max(within, 0)), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		page, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		dbg, _ := chromedp.Run(tab, chromedp.Evaluate[string](`JSON.stringify({status: document.querySelector('#status')?.textContent, devices: window.edgefence && edgefence.devices})`))
		t.Fatalf("%s: not within %v (%v); the page shows:\n%s\n%s", what, within, err, page, dbg)
	}
}

func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// The page, as an operator opens it on a running serve: the fences are on
// the map; a tracker's ping puts it on the map at its position; its ENTER
// is listed within the hold and a second; two pings delivered out of
// order come out as ENTER then EXIT, and the device is shown outside (an
// arrival-order engine would leave a phantom ENTER); the filters hide the
// other device; the device's panel shows its engine state, and opens
// from its URL.
func TestPageShowsDevicesAndTransitions(t *testing.T) {
	cfg := testConfig(t)
	srv := start(t, cfg)
	tab := browser(t, 40*time.Second)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+srv.HTTPAddr()+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the event stream connects", `document.querySelector('#status').textContent === 'live'`)
	until(t, tab, wait, "the five fences are on the map", `edgefence.fences && edgefence.fences.features.length === 5 && document.querySelectorAll('#map path.leaflet-interactive').length >= 5`)

	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	now := time.Now()
	sent := time.Now()
	tracker.Publish("devices/van-2/telemetry", 1, ping(museumLat, museumLon, now))
	enterRow := `document.querySelector('#transitions tr[data-device="van-2"][data-type="ENTER"][data-fence="zone-museumsinsel"]')`
	until(t, tab, wait, "van-2's ENTER is listed", enterRow+` !== null`)
	// When the row appeared, by the page's clock (the same machine's): the
	// test's own polling, slower under load, is not the page's latency.
	if shown := time.UnixMilli(eval[int64](t, tab, `+`+enterRow+`.dataset.shown`)); shown.Sub(sent) > cfg.Engine.Hold+time.Second {
		t.Errorf("van-2's ENTER appeared %v after its ping was sent, want within the hold (%v) and a second", shown.Sub(sent), cfg.Engine.Hold)
	}
	until(t, tab, wait, "van-2 is on the map", `'van-2' in edgefence.markers`)
	ll := eval[[]float64](t, tab, `(() => { const p = edgefence.markers['van-2'].getLatLng(); return [p.lat, p.lng]; })()`)
	if math.Abs(ll[0]-museumLat) > 1e-5 || math.Abs(ll[1]-museumLon) > 1e-5 {
		t.Errorf("van-2's marker at %v, want %v,%v", ll, museumLat, museumLon)
	}
	if got := eval[string](t, tab, `document.querySelector('#devices tr[data-device="van-2"]').dataset.inside`); got != "zone-museumsinsel" {
		t.Errorf("van-2 shown inside %q, want zone-museumsinsel", got)
	}

	// In at t, out at t+300 ms, delivered the other way round within the hold.
	now = time.Now()
	tracker.Publish("devices/truck-1/telemetry", 1, ping(outLat, outLon, now.Add(300*time.Millisecond)))
	tracker.Publish("devices/truck-1/telemetry", 1, ping(museumLat, museumLon, now))
	until(t, tab, wait, "truck-1's EXIT is listed", `document.querySelector('#transitions tr[data-device="truck-1"][data-type="EXIT"]') !== null`)
	types := eval[[]string](t, tab, `[...document.querySelectorAll('#transitions tr[data-device="truck-1"]')].reverse().map(r => r.dataset.type + (r.dataset.historic === 'true' ? ' historic' : ''))`)
	if strings.Join(types, ",") != "ENTER,EXIT" {
		t.Errorf("truck-1's transitions on the page, oldest first: %v, want ENTER,EXIT", types)
	}
	until(t, tab, wait, "truck-1 is shown outside every fence at its last position",
		fmt.Sprintf(`(() => { const r = document.querySelector('#devices tr[data-device="truck-1"]'); return r !== null && r.dataset.inside === '' && Math.abs(r.dataset.lat - %v) < 1e-5; })()`, outLat))

	// The panel of one device.
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`#devices tr[data-device="truck-1"]`))); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "truck-1's panel shows its engine state",
		`!document.querySelector('#panel').hidden && document.querySelector('#panel dd[data-key="evaluated pings"]')?.textContent === '2' && document.querySelectorAll('#panel-transitions tr').length === 2`)

	if path := os.Getenv("EDGEFENCE_SCREENSHOT"); path != "" {
		screenshot(t, tab, tracker, path)
	}

	// A fence set applied (as from the admin topic) replaces the map's.
	depot := `{"type":"FeatureCollection","features":[{"type":"Feature","id":"depot-9","properties":{"name":"Depot 9"},"geometry":{"type":"Polygon","coordinates":[[[13.39,52.51],[13.41,52.51],[13.41,52.53],[13.39,52.53],[13.39,52.51]]]}}]}`
	if err := srv.ApplyFences([]byte(depot), "test"); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the map shows the new set", `edgefence.fences.features.length === 1 && edgefence.fences.features[0].id === 'depot-9' && document.querySelectorAll('#map path.leaflet-interactive').length === 1 + Object.keys(edgefence.markers).length`)

	// The device filter hides the other device's rows.
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#filter-device"), "truck")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the filter hides van-2", `document.querySelector('#transitions tr[data-device="van-2"]').classList.contains('hidden') && document.querySelector('#devices tr[data-device="van-2"]') === null`)
	if eval[bool](t, tab, `document.querySelector('#transitions tr[data-device="truck-1"]').classList.contains('hidden')`) {
		t.Error("the filter hides truck-1 too")
	}

	// A device's panel has its own URL: opened afresh, the page shows it.
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank"), chromedp.Navigate("http://"+srv.HTTPAddr()+"/#device=truck-1")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the link opens truck-1's panel",
		`!document.querySelector('#panel').hidden && document.querySelector('#panel-device').textContent === 'truck-1' && document.querySelector('#panel dd[data-key="evaluated pings"]')?.textContent === '2'`)
}

// screenshot fills the page with a few more devices and saves it (the
// picture in docs/dashboard.md).
func screenshot(t *testing.T, tab context.Context, tracker *mqtttest.Client, path string) {
	t.Helper()
	now := time.Now()
	for _, d := range []struct {
		id       string
		lat, lon float64
	}{{"bike-7", 52.5219, 13.4132}, {"bus-12", 52.514, 13.355}, {"truck-3", 52.5355, 13.3705}, {"van-5", 52.557, 13.291}, {"car-8", 52.53, 13.39}, {"car-9", 52.53, 13.39}} {
		tracker.Publish("devices/"+d.id+"/telemetry", 1, ping(d.lat, d.lon, now))
	}
	until(t, tab, wait, "the others are on the map", `Object.keys(edgefence.markers).length >= 8`)
	for i, at := range [][2]float64{{52.5165, 13.3610}, {52.5185, 13.3700}, {52.5230, 13.3800}} { // bus-12 drives on
		tracker.Publish("devices/bus-12/telemetry", 1, ping(at[0], at[1], time.Now()))
		until(t, tab, wait, "bus-12 moved", fmt.Sprintf(`edgefence.trail['bus-12']?.length === %d`, i+2))
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// With --auth the page asks for a login: without one it shows nothing; a
// device user is refused; a dashboard user sees transitions.
func TestPageNeedsDashboardLogin(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, "viewer", "dashboard", "tracker", "gateway")
	srv := start(t, cfg)
	tab := browser(t, 30*time.Second)
	url := "http://" + srv.HTTPAddr() + "/"

	open := func(headers network.Headers) (int64, error) {
		t.Helper()
		if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: headers}); err != nil {
			t.Fatal(err)
		}
		resp, err := chromedp.Run(tab, chromedp.NavigateResponse(url))
		if err != nil {
			return 0, err
		}
		return resp.Status, nil
	}
	basic := func(user string) network.Headers {
		return network.Headers{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))}
	}
	// Headless Chromium cannot ask for the password: it ends the
	// navigation on the 401 and shows no page.
	if status, err := open(network.Headers{}); err == nil || !strings.Contains(err.Error(), "ERR_INVALID_AUTH_CREDENTIALS") {
		t.Errorf("without a login: status %d, error %v; want the 401 to end the navigation", status, err)
	}
	if eval[bool](t, tab, `document.querySelector('#map') !== null`) {
		t.Error("without a login the page is shown")
	}
	if status := getJSON(t, url, nil); status != 401 {
		t.Errorf("without a login: status %d, want 401", status)
	}
	if status, err := open(basic("tracker")); status != 403 {
		t.Errorf("a gateway user: status %d (%v), want 403", status, err)
	}
	if status, err := open(basic("viewer")); status != 200 {
		t.Fatalf("the dashboard user: status %d (%v), want 200", status, err)
	}
	until(t, tab, wait, "the dashboard user's event stream connects", `document.querySelector('#status').textContent === 'live'`)

	conn, err := net.DialTimeout("tcp", srv.MQTTAddr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	cp := &paho.Connect{ClientID: mqtttest.ID("tracker"), KeepAlive: 30, CleanStart: true,
		Username: "tracker", UsernameFlag: true, Password: []byte(secret), PasswordFlag: true}
	tracker, _, err := mqtttest.Dial(t, conn, cp, wait)
	if err != nil {
		t.Fatal(err)
	}
	tracker.Publish("devices/van-9/telemetry", 1, ping(museumLat, museumLon, time.Now()))
	until(t, tab, wait, "van-9's ENTER is listed", `document.querySelector('#transitions tr[data-device="van-9"][data-type="ENTER"]') !== null`)
}
