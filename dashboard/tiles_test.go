package dashboard_test

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/dashboard"
)

// A --map-tiles the page cannot use stops serve at start-up with an error
// that says what is wrong and what would work, rather than a page with no
// map and an exception in its console.
func TestServeRefusesAMapTilesItCannotUse(t *testing.T) {
	for _, c := range []struct{ tiles, want string }{
		{"tile.openstreetmap.org/{z}/{x}/{y}.png", "https://tile.openstreetmap.org/{z}/{x}/{y}.png"},
		{"ftp://tiles.example/{z}/{x}/{y}.png", "http or https"},
		{"https://tiles.example/{z}/{x}.png", "{y}"},
		{"https://tiles.example/{z}/{x}/{y}.png?key={apikey}", "{apikey}"},
		{filepath.Join(t.TempDir(), "missing"), "directory"},
	} {
		cfg := testConfig(t)
		cfg.MapTiles = c.tiles
		srv, err := broker.Start(cfg)
		if err == nil {
			srv.Close(t.Context())
			t.Errorf("--map-tiles %s: serve started", c.tiles)
			continue
		}
		if !strings.Contains(err.Error(), "--map-tiles") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--map-tiles %s: %v; want it to name the flag and %q", c.tiles, err, c.want)
		}
	}
}

func TestParseTiles(t *testing.T) {
	dir := t.TempDir()
	for _, z := range []string{"3", "5", "4", "notes"} {
		if err := os.MkdirAll(filepath.Join(dir, z), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		spec, attribution string
		want              dashboard.Tiles
		err               string
	}{
		{spec: "", want: dashboard.Tiles{MinZoom: -1, MaxZoom: -1}},
		{spec: "", attribution: "© someone", err: "without --map-tiles"},
		{spec: "https://{s}.tile.example/{z}/{x}/{y}{r}.png", attribution: "© OpenStreetMap contributors",
			want: dashboard.Tiles{Template: "https://{s}.tile.example/{z}/{x}/{y}{r}.png", Attribution: "© OpenStreetMap contributors", MinZoom: -1, MaxZoom: -1}},
		{spec: "http://127.0.0.1:8080/tms/{z}/{x}/{-y}.png",
			want: dashboard.Tiles{Template: "http://127.0.0.1:8080/tms/{z}/{x}/{-y}.png", Attribution: "tiles: 127.0.0.1:8080", MinZoom: -1, MaxZoom: -1}},
		{spec: "https:///{z}/{x}/{y}.png", err: "no host"},
		{spec: dir, want: dashboard.Tiles{Template: "tiles/{z}/{x}/{y}.png", Dir: dir, MinZoom: 3, MaxZoom: 5}},
		{spec: dir + "/{z}/{x}/{y}.jpg", attribution: "own survey",
			want: dashboard.Tiles{Template: "tiles/{z}/{x}/{y}.jpg", Dir: dir, Attribution: "own survey", MinZoom: 3, MaxZoom: 5}},
		{spec: dir + "/{x}/{y}/{z}.png", want: dashboard.Tiles{Template: "tiles/{x}/{y}/{z}.png", Dir: dir, MinZoom: -1, MaxZoom: -1}},
		{spec: dir + "/{s}/{z}/{x}/{y}.png", err: "{s}"},
		{spec: "{z}/{x}/{y}.png", err: "directory first"},
		{spec: filepath.Join(dir, "3") + "x", err: "directory of tiles"},
	} {
		got, err := dashboard.ParseTiles(c.spec, c.attribution)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseTiles(%q, %q): %v, want an error with %q", c.spec, c.attribution, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseTiles(%q, %q) = %+v, %v; want %+v", c.spec, c.attribution, got, err, c.want)
		}
	}
}

// A base map with no network: --map-tiles names a directory of tiles,
// which the page's own server serves. The page asks only for the zoom
// levels the directory holds (here 0, scaled up), so no request fails,
// and the provider's credit is on the map. Directories are not listed.
func TestPageDrawsTilesFromADirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "0", "0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "0", "0", "0.png"), tilePNG(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.MapTiles = dir
	cfg.MapAttribution = "© <b>own</b> survey"
	srv := start(t, cfg)
	if status := getJSON(t, "http://"+srv.HTTPAddr()+"/tiles/0/0/", nil); status != 404 {
		t.Errorf("a directory of tiles: %d, want 404 (no listing)", status)
	}
	tab := browser(t, 30*time.Second)
	seen := watchProblems(t, tab)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+srv.HTTPAddr()+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "the tile from the directory is drawn", `[...document.querySelectorAll('#map img.leaflet-tile-loaded')].some((i) => i.src.endsWith('/tiles/0/0/0.png') && i.naturalWidth === 256)`)
	if got := eval[string](t, tab, `document.querySelector('.leaflet-control-attribution').textContent`); !strings.Contains(got, "© <b>own</b> survey") {
		t.Errorf("the map credits %q, want the --map-attribution as written", got)
	}
	until(t, tab, wait, "the fences are drawn over it", `document.querySelectorAll('#map path.leaflet-interactive').length >= 5`)
	seen.check(t, "a base map from a directory")
}

// tilePNG is a plain 256 px tile.
func tilePNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{R: 200, G: 220, B: 200, A: 255}), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A base map from a tile server: --map-tiles is its URL template, and
// the credit its terms require, --map-attribution, is on the map. The
// server here is a local one (real HTTP on loopback) that has every tile.
func TestPageDrawsTilesFromAURL(t *testing.T) {
	tile := tilePNG(t)
	var asked atomic.Int64
	tiles := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !regexp.MustCompile(`^/osm/\d+/\d+/\d+\.png$`).MatchString(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(tile)
	}))
	defer tiles.Close()
	cfg := testConfig(t)
	cfg.MapTiles = tiles.URL + "/osm/{z}/{x}/{y}.png"
	cfg.MapAttribution = "© OpenStreetMap contributors"
	srv := start(t, cfg)
	tab := browser(t, 30*time.Second)
	seen := watchProblems(t, tab)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+srv.HTTPAddr()+"/")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, wait, "a tile from the server is drawn", `[...document.querySelectorAll('#map img.leaflet-tile-loaded')].some((i) => i.src.startsWith(`+strconv.Quote(tiles.URL+"/osm/")+`) && i.naturalWidth === 256)`)
	if got := eval[string](t, tab, `document.querySelector('.leaflet-control-attribution').textContent`); !strings.Contains(got, "© OpenStreetMap contributors") {
		t.Errorf("the map credits %q, want the --map-attribution", got)
	}
	until(t, tab, wait, "the fences are drawn over it", `document.querySelectorAll('#map path.leaflet-interactive').length >= 5`)
	if asked.Load() == 0 {
		t.Error("the tile server was never asked")
	}
	seen.check(t, "a base map from a URL")
}
