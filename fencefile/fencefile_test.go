package fencefile

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fence file that loads but is likely a mistake (no fences; a polygon
// crossing itself) is named in a warning; a sound one is not.
func TestOpenWarnsAboutEmptyFilesAndSelfIntersectingFences(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"empty", `{"type":"FeatureCollection","features":[]}`, []string{"no fences"}},
		{"bow tie", `{"type":"FeatureCollection","features":[` +
			`{"type":"Feature","id":"depot","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}},` +
			`{"type":"Feature","id":"yard-7","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}]}`,
			[]string{"fence=yard-7", "crosses itself"}},
		{"sound", `{"type":"FeatureCollection","features":[` +
			`{"type":"Feature","id":"depot","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fences.geojson")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, _, err := Open(path, slog.New(slog.NewTextHandler(&buf, nil))); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if tc.want == nil && out != "" {
				t.Errorf("a sound file logged:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, "level=WARN") || !strings.Contains(out, w) || !strings.Contains(out, path) {
					t.Errorf("no warning naming %q and the file:\n%s", w, out)
				}
			}
		})
	}
}
