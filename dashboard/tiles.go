package dashboard

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Tiles is a validated --map-tiles: where the page gets its base map.
type Tiles struct {
	// Template is what the page hands Leaflet: an http(s) URL template,
	// or one under tiles/ for a directory served by the page itself.
	Template string
	// Dir is the directory served at /tiles/, or "" for a URL.
	Dir string
	// Attribution is shown in the map's corner (text, not HTML).
	Attribution string
	// MinZoom and MaxZoom are the zoom levels a directory holds ({z}
	// first in its layout), so that the page scales the nearest level
	// rather than asking for tiles that are not there; -1 when unknown.
	MinZoom, MaxZoom int
}

// placeholder matches what Leaflet fills in a tile URL template; any
// other {name} makes Leaflet throw for every tile.
var placeholder = regexp.MustCompile(`\{[^{}]*\}`)

var tileKeys = map[string]bool{"{z}": true, "{x}": true, "{y}": true, "{-y}": true, "{s}": true, "{r}": true}

// ParseTiles validates spec, a --map-tiles value: "" for no base map, an
// http(s) URL template with {z}, {x} and {y}, or a local directory of
// tiles, laid out {z}/{x}/{y}.png unless spec spells a template under it
// (DIR/{z}/{x}/{y}.jpg). attribution is the tile provider's credit,
// required by most providers' terms.
func ParseTiles(spec, attribution string) (Tiles, error) {
	t := Tiles{Attribution: attribution, MinZoom: -1, MaxZoom: -1}
	if spec == "" {
		if attribution != "" {
			return t, errors.New("--map-attribution without --map-tiles: there is no base map to credit")
		}
		return t, nil
	}
	bad := func(format string, a ...any) (Tiles, error) {
		return Tiles{}, fmt.Errorf("--map-tiles %q: "+format, append([]any{spec}, a...)...)
	}
	if strings.Contains(spec, "://") {
		u, err := url.Parse(placeholder.ReplaceAllString(spec, "0"))
		switch {
		case err != nil:
			return bad("%v", err)
		case u.Scheme != "http" && u.Scheme != "https":
			return bad("want an http or https URL (or a local directory of tiles), not %s", u.Scheme)
		case u.Host == "":
			return bad("no host in the URL")
		}
		if err := checkTemplate(spec, true); err != nil {
			return bad("%v", err)
		}
		t.Template = spec
		if t.Attribution == "" {
			t.Attribution = "tiles: " + u.Host
		}
		return t, nil
	}
	dir, rel := spec, "{z}/{x}/{y}.png"
	if i := strings.IndexByte(spec, '{'); i >= 0 {
		slash := strings.LastIndexByte(spec[:i], '/')
		if slash < 0 {
			return bad("a local template needs its directory first, e.g. DIR/{z}/{x}/{y}.png")
		}
		dir, rel = spec[:slash], spec[slash+1:]
		if err := checkTemplate(rel, false); err != nil {
			return bad("%v", err)
		}
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		hint := ""
		if first, _, _ := strings.Cut(spec, "/"); strings.Contains(first, ".") && strings.Contains(spec, "{") {
			hint = fmt.Sprintf("; for a tile server, give its scheme: https://%s", spec)
		}
		if err == nil {
			err = errors.New("not a directory")
		}
		return bad("neither an http(s) URL template nor a directory of tiles (%v)%s", err, hint)
	}
	t.Dir, t.Template = dir, "tiles/"+rel
	if rest, ok := strings.CutPrefix(rel, "{z}/"); ok && !strings.Contains(rest, "{z}") {
		t.MinZoom, t.MaxZoom = zoomLevels(dir)
	}
	return t, nil
}

// checkTemplate checks a template's placeholders: {z}, {x} and {y} (or
// {-y}) present, nothing Leaflet cannot fill, and no subdomains ({s})
// for a local directory.
func checkTemplate(tmpl string, remote bool) error {
	for _, p := range placeholder.FindAllString(tmpl, -1) {
		if !tileKeys[p] || !remote && p == "{s}" {
			return fmt.Errorf("%s is not a placeholder the page can fill (want {z}, {x}, {y}, {-y}%s; write a key into the URL itself)", p, map[bool]string{true: ", {s}, {r}", false: ", {r}"}[remote])
		}
	}
	if !strings.Contains(tmpl, "{z}") || !strings.Contains(tmpl, "{x}") || !strings.Contains(tmpl, "{y}") && !strings.Contains(tmpl, "{-y}") {
		return errors.New("want {z}, {x} and {y} in the template, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png")
	}
	return nil
}

// zoomLevels returns the lowest and highest zoom level directories in
// dir (-1, -1 for none).
func zoomLevels(dir string) (lo, hi int) {
	lo, hi = -1, -1
	entries, err := os.ReadDir(dir)
	if err != nil {
		return lo, hi
	}
	for _, e := range entries {
		z, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || z < 0 || z > 30 {
			continue
		}
		if lo < 0 || z < lo {
			lo = z
		}
		hi = max(hi, z)
	}
	return lo, hi
}

// tileServer serves the files under dir, and no directory listings.
func tileServer(dir string) http.Handler {
	fsys := os.DirFS(dir)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if st, err := fs.Stat(fsys, name); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		// Tiles do not change under a running server; a day saves a
		// panning page most requests.
		w.Header().Set("Cache-Control", "max-age=86400")
		http.ServeFileFS(w, r, fsys, name)
	})
}
