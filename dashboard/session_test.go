package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// problems collects what a user would see go wrong in the browser's
// console and network panel: exceptions, console errors and failed
// requests (including HTTP errors).
type problems struct {
	mu   sync.Mutex
	list []string
}

func watchProblems(t *testing.T, tab context.Context) *problems {
	t.Helper()
	p := &problems{}
	add := func(format string, a ...any) {
		p.mu.Lock()
		p.list = append(p.list, fmt.Sprintf(format, a...))
		p.mu.Unlock()
	}
	err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			add("exception: %s (%s:%d)", msg, d.URL, d.LineNumber+1)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				add("console.error: %s", strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				add("console: %s %s", ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventLoadingFailed:
			if !ev.Canceled {
				add("request failed: %s (%s)", ev.ErrorText, ev.Type)
			}
		case *network.EventResponseReceived:
			if ev.Response.Status >= 400 {
				add("HTTP %d: %s", ev.Response.Status, ev.Response.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *problems) check(t *testing.T, when string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.list) > 0 {
		t.Errorf("%s: %d problems in the browser:\n%s", when, len(p.list), strings.Join(p.list, "\n"))
		p.list = nil
	}
}

// Where the session's devices are: spot is outside every fence, in the
// map's view of the bundled fences; the track leads away from it.
var (
	spot  = [2]float64{52.53, 13.40}
	track = [][2]float64{spot, {52.532, 13.395}, {52.534, 13.39}}
)

// kathmandu is the zone the session's browser runs in: an offset of
// 5:45, which neither UTC nor any whole-hour zone can pass for.
var kathmandu = time.FixedZone("UTC+05:45", 5*3600+45*60)

// A dispatcher's session on the live page, from no device to three and
// back to none (evicted when idle): no exception, console error or
// failed request throughout; devices at one spot are told apart, each
// labelled without hovering; the fleet view counts the devices the table
// lists; a device's last positions are drawn as a track, again after a
// reload; times are local, with the zone said; a fence's occupancy shows
// on a click; a device's panel has its own URL, which opens it alone; a
// one-ping visit's EXIT is not tagged as a fault; the page is usable
// 420 px wide; evicted devices leave the map and the table.
func TestPageSessionFromNoDeviceToThreeAndBack(t *testing.T) {
	cfg := testConfig(t)
	// Devices outside every fence, silent for it, are evicted: long enough
	// for the checks before car-3 drives in on a loaded machine.
	cfg.Engine.IdleTimeout = 10 * time.Second
	srv := start(t, cfg)
	tab := browser(t, 60*time.Second)
	seen := watchProblems(t, tab)
	if _, err := chromedp.Call(tab, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kathmandu"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+srv.HTTPAddr()+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the event stream connects", `document.querySelector('#status').textContent === 'live'`)
	until(t, tab, wait, "two ticks with no device have come", `edgefence.ticks >= 2`)
	until(t, tab, wait, "the fleet view counts no device", `/^0 devices/.test(document.querySelector('#fleet p').textContent)`)
	seen.check(t, "no device")

	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	send := func(id string, at [2]float64, ts time.Time) {
		tracker.Publish("devices/"+id+"/telemetry", 1, ping(at[0], at[1], ts))
	}
	cars := []string{"car-1", "car-2", "car-3"}
	firstAt := time.Now()
	for _, id := range cars {
		send(id, spot, firstAt)
	}
	until(t, tab, wait, "the three cars are listed", `document.querySelectorAll('#devices tbody tr').length === 3`)
	// The fleet view refreshes every 10 s on its own; it must not say 0
	// devices beside a table of 3 until then.
	until(t, tab, 4*time.Second, "the fleet view counts the three cars the table lists", `/^3 devices/.test(document.querySelector('#fleet p').textContent)`)

	// Labels without hovering, and three dots, not one.
	type dot struct {
		X, Y  float64
		Label string
		Shown bool
	}
	dots := eval[map[string]dot](t, tab, `(() => {
		const box = document.querySelector('#map').getBoundingClientRect(), out = {};
		for (const id of ['car-1', 'car-2', 'car-3']) {
			const m = edgefence.markers[id], r = m.getElement().getBoundingClientRect();
			const tip = m.getTooltip(), el = tip && tip.getElement();
			const lr = el && el.isConnected ? el.getBoundingClientRect() : null;
			out[id] = {X: r.x + r.width / 2, Y: r.y + r.height / 2, Label: el && el.isConnected ? el.textContent : '',
				Shown: !!lr && getComputedStyle(el).opacity !== '0' && getComputedStyle(el).visibility !== 'hidden' &&
					lr.width > 0 && lr.left >= box.left && lr.right <= box.right && lr.top >= box.top && lr.bottom <= box.bottom};
		}
		return out;
	})()`)
	for i, id := range cars {
		if d := dots[id]; !d.Shown || !strings.Contains(d.Label, id) {
			t.Errorf("%s's label without hovering: %q, shown %v; want its id, on the map", id, d.Label, d.Shown)
		}
		for _, other := range cars[i+1:] {
			a, b := dots[id], dots[other]
			if dx, dy := a.X-b.X, a.Y-b.Y; dx*dx+dy*dy < 10*10 {
				t.Errorf("%s and %s, at one spot, are drawn %.1f px apart: one dot", id, other, max(dx, -dx, dy, -dy))
			}
		}
	}

	// car-3 drives into the museum fence: its ENTER is listed at the
	// stamp's local time, and the zone is said.
	// Stamped in the past but after car-3's first ping, however quickly the
	// checks above ran: an earlier stamp would make it a late, historic fix.
	enterAt := time.Now().Add(-time.Second)
	if !enterAt.After(firstAt) {
		enterAt = firstAt.Add(2 * time.Millisecond)
	}
	enterAt = enterAt.Truncate(time.Millisecond)
	send("car-3", [2]float64{museumLat, museumLon}, enterAt)
	send("car-1", spot, time.Now()) // the others stay alive
	send("car-2", spot, time.Now())
	enterRow := `document.querySelector('#transitions tr[data-device="car-3"][data-type="ENTER"]')`
	until(t, tab, wait, "car-3's ENTER is listed", enterRow+` !== null`)
	if got, want := eval[string](t, tab, enterRow+`.cells[0].textContent`), enterAt.In(kathmandu).Format("2006-01-02 15:04:05.000"); got != want {
		t.Errorf("car-3's ENTER listed at %q, want the local time %q", got, want)
	}
	if zone := eval[string](t, tab, `document.querySelector('#tz').textContent`); !strings.Contains(zone, "Asia/Kathmandu") && !strings.Contains(zone, "Asia/Katmandu") || !strings.Contains(zone, "UTC+05:45") {
		t.Errorf("the page names the times' zone %q, want Asia/Kathmandu (UTC+05:45)", zone)
	}

	// A click on the fence shows who is inside it.
	until(t, tab, wait, "car-3 is shown inside", `(document.querySelector('#devices tr[data-device="car-3"]')?.dataset.inside ?? '') === 'zone-museumsinsel'`)
	xy := eval[[]float64](t, tab, `(() => {
		let path;
		edgefence.fenceLayer.eachLayer((l) => { if (l.feature.id === 'zone-museumsinsel') path = l.getElement(); });
		const r = path.getBoundingClientRect();
		for (let fy = 0.2; fy < 0.9; fy += 0.1) for (let fx = 0.2; fx < 0.9; fx += 0.1) {
			const x = r.left + fx * r.width, y = r.top + fy * r.height;
			if (document.elementFromPoint(x, y) === path) return [x, y];
		}
		return [];
	})()`)
	if len(xy) != 2 {
		t.Fatal("no point of the museum fence is clickable")
	}
	if err := chromedp.Do(tab, chromedp.MouseClickXY(xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the fence's popup lists car-3", `(() => { const p = document.querySelector('.leaflet-popup-content'); return p !== null && p.textContent.includes('Museumsinsel') && p.textContent.includes('car-3') && p.textContent.includes('1 device'); })()`)

	// car-3 leaves after one ping inside: an ordinary visit, not a fault.
	send("car-3", spot, time.Now())
	exitRow := `document.querySelector('#transitions tr[data-device="car-3"][data-type="EXIT"]')`
	until(t, tab, wait, "car-3's EXIT is listed", exitRow+` !== null`)
	tags := eval[[]string](t, tab, `[...`+exitRow+`.querySelectorAll('.tag')].map((s) => s.textContent + '|' + getComputedStyle(s).backgroundColor)`)
	if len(tags) != 1 || !strings.HasPrefix(tags[0], "one-ping visit|") || strings.HasSuffix(tags[0], "rgb(255, 224, 178)") {
		t.Errorf("car-3's EXIT after one ping inside is tagged %v; want one neutral tag, one-ping visit", tags)
	}

	// car-1 drives on: its last positions are drawn as a track.
	for _, at := range track[1:] {
		send("car-1", at, time.Now())
		until(t, tab, wait, "car-1 is shown at its next position", fmt.Sprintf(`Math.abs(edgefence.devices['car-1'].lat - %v) < 1e-6`, at[0]))
	}
	drawn := eval[[][2]float64](t, tab, `edgefence.tracks['car-1'].getElement().isConnected ? edgefence.tracks['car-1'].getLatLngs().map((p) => [p.lat, p.lng]) : []`)
	if len(drawn) != len(track) {
		t.Errorf("car-1's track has the points %v, want %v", drawn, track)
	} else {
		for i := range track {
			if d := drawn[i]; abs(d[0]-track[i][0]) > 1e-6 || abs(d[1]-track[i][1]) > 1e-6 {
				t.Errorf("car-1's track point %d at %v, want %v", i, d, track[i])
			}
		}
	}

	// The server kept the track: a reload draws it at once.
	if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "car-1's track is drawn again after a reload", fmt.Sprintf(`edgefence.tracks['car-1']?.getLatLngs().length === %d && edgefence.tracks['car-1'].getElement().isConnected`, len(track)))

	// A device's panel has its own URL: the link in the table.
	send("car-2", spot, time.Now())
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`#devices tr[data-device="car-2"] a`))); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "car-2's panel opens at its URL", `!document.querySelector('#panel').hidden && document.querySelector('#panel-device').textContent === 'car-2' && location.hash === '#device=car-2'`)
	// The URL alone opens it, as a bookmark or a shared link would.
	if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "car-2's panel opens from its URL alone", `!document.querySelector('#panel').hidden && document.querySelector('#panel-device').textContent === 'car-2' && document.querySelector('#panel-figures').textContent !== ''`)

	// 420 px wide: nothing runs off the screen, the map stays.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(420, 800)); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the page fits 420 px", `document.documentElement.clientWidth === 420`)
	layout := eval[struct {
		Scroll int
		Off    []string
		Map    []float64
	}](t, tab, `(() => {
		const w = document.documentElement.clientWidth, off = [];
		for (const el of document.querySelectorAll('header *, aside h2, aside table, aside td, aside th, aside dd')) {
			const r = el.getBoundingClientRect();
			if (r.width > 0 && (r.right > w + 0.5 || r.left < -0.5)) off.push(el.tagName + ' "' + el.textContent.slice(0, 30) + '" ' + Math.round(r.left) + '..' + Math.round(r.right));
		}
		const m = document.querySelector('#map').getBoundingClientRect();
		return {Scroll: document.documentElement.scrollWidth, Off: off.slice(0, 8), Map: [m.width, m.height]};
	})()`)
	if layout.Scroll > 420 || len(layout.Off) > 0 {
		t.Errorf("at 420 px the page is %d px wide; off the screen: %v", layout.Scroll, layout.Off)
	}
	if layout.Map[0] < 400 || layout.Map[1] < 200 {
		t.Errorf("at 420 px the map is %v px, want the width and at least 200 px high", layout.Map)
	}
	seen.check(t, "three devices")

	// Silent outside every fence, the three are evicted: gone from the
	// map, its labels and tracks, the table, and the fleet view.
	until(t, tab, cfg.Engine.IdleTimeout+3*wait, "the evicted devices leave the page", `document.querySelectorAll('#devices tbody tr').length === 0 &&
		Object.keys(edgefence.markers).length === 0 && Object.keys(edgefence.tracks).length === 0 &&
		document.querySelectorAll('#map .leaflet-tooltip.label, #map path.track').length === 0`)
	until(t, tab, wait, "the fleet view counts none", `/^0 devices/.test(document.querySelector('#fleet p').textContent)`)
	until(t, tab, wait, "car-2's open panel says it is gone", `document.querySelector('#panel-figures').textContent.includes('evicted')`)
	ticks := eval[int](t, tab, `edgefence.ticks`)
	until(t, tab, wait, "two more ticks with no device", fmt.Sprintf(`edgefence.ticks >= %d`, ticks+2))
	seen.check(t, "back to no device")
}

func abs(x float64) float64 { return max(x, -x) }
