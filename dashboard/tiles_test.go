package dashboard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
