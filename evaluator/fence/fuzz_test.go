package fence

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse is an internal test so it can probe each fence at its own
// bounding-box centre.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"type":"FeatureCollection","features":[]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","properties":{"name":"A","dwell":5},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]],[[0.2,0.2],[0.2,0.4],[0.4,0.4],[0.2,0.2]]]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":7,"properties":{"radius":1e7},"geometry":{"type":"Point","coordinates":[180,-90]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"m"},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[6,6],[5,5]]]]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"$x","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"r","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"\u0001\u007f\u2028","properties":{"name":"\u0007\"","radius":5},"geometry":{"type":"Point","coordinates":[1,2]}}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned a Set and error %v", err)
			}
			return
		}
		q := NewSearcher()
		for i, fe := range s.Fences() {
			if !validTopicLevel(fe.ID) {
				t.Fatalf("accepted invalid id %q", fe.ID)
			}
			if i > 0 && s.Fences()[i-1].ID >= fe.ID {
				t.Fatalf("Fences not sorted by unique id: %q then %q", s.Fences()[i-1].ID, fe.ID)
			}
			if out := fe.AppendGeoJSON(nil); !json.Valid(out) {
				t.Fatalf("%q: its GeoJSON is not JSON: %s", fe.ID, out)
			}
			if s.ByID(fe.ID) != fe {
				t.Fatalf("ByID(%q) is not the fence from Fences", fe.ID)
			}
			lat, lon := (fe.min[1]+fe.max[1])/2, (fe.min[0]+fe.max[0])/2
			in := fe.Contains(lat, lon)
			found := false
			for _, hit := range q.Contains(s, lat, lon) {
				found = found || hit == fe
			}
			if in != found {
				t.Fatalf("%q: Fence.Contains = %v but Searcher found it = %v", fe.ID, in, found)
			}
		}
	})
}

// validTopicLevel restates the id rule independently of the parser.
func validTopicLevel(id string) bool {
	return id != "" && len(id) <= 128 && utf8.ValidString(id) &&
		!strings.ContainsAny(id, "/+#\x00") && !strings.HasPrefix(id, "$")
}
