package fence

import (
	"strconv"

	"github.com/edgefence/edgefence/internal/jsonstr"
)

// AppendGeoJSON appends f as a GeoJSON Feature: its id, properties name,
// dwell (seconds, when set) and, for a circle, radius (metres) with a
// Point; a Polygon, or a MultiPolygon of several, otherwise. It is what a
// map draws; parsing it gives the same fence.
func (f *Fence) AppendGeoJSON(b []byte) []byte {
	b = append(b, `{"type":"Feature","id":`...)
	b = jsonstr.Append(b, f.ID)
	b = append(b, `,"properties":{"id":`...)
	b = jsonstr.Append(b, f.ID)
	if f.Name != "" {
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, f.Name)
	}
	if f.HasDwell {
		b = append(b, `,"dwell":`...)
		b = strconv.AppendFloat(b, f.Dwell.Seconds(), 'f', -1, 64)
	}
	if f.isCircle {
		b = append(b, `,"radius":`...)
		b = strconv.AppendFloat(b, f.circle.radius, 'f', 3, 64)
		b = append(b, `},"geometry":{"type":"Point","coordinates":`...)
		b = appendCoord(b, f.circle.lon/deg, f.circle.lat/deg)
		return append(b, `}}`...)
	}
	outer := 0
	for _, r := range f.rings {
		if !r.hole {
			outer++
		}
	}
	if outer > 1 {
		b = append(b, `},"geometry":{"type":"MultiPolygon","coordinates":[`...)
	} else {
		b = append(b, `},"geometry":{"type":"Polygon","coordinates":`...)
	}
	start := 0
	for i, r := range f.rings {
		switch {
		case !r.hole && i > 0:
			b = append(b, "],["...)
		case !r.hole:
			b = append(b, '[')
		default:
			b = append(b, ',')
		}
		b = append(b, '[')
		for j := start; j < r.end; j += 2 {
			if j > start {
				b = append(b, ',')
			}
			b = appendCoord(b, f.coords[j], f.coords[j+1])
		}
		b = append(b, ']')
		start = r.end
	}
	b = append(b, ']')
	if outer > 1 {
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

func appendCoord(b []byte, lon, lat float64) []byte {
	b = append(b, '[')
	b = strconv.AppendFloat(b, lon, 'f', -1, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, lat, 'f', -1, 64)
	return append(b, ']')
}
