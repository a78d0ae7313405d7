package dashboard

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
	"github.com/edgefence/edgefence/internal/jsonstr"
)

// quote is s as the output payloads quote it, to find a device's in them.
func quote(s string) string { return string(jsonstr.Append(nil, s)) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stamp is a time as JSON: RFC 3339 with milliseconds, or null when zero.
type stamp time.Time

func (t stamp) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// config tells the page what it needs beyond the data: the base map.
func (d *Dashboard) config(w http.ResponseWriter, _ *http.Request) {
	t := d.tiles
	writeJSON(w, map[string]any{
		"tiles": t.Template, "attribution": t.Attribution, "min_zoom": t.MinZoom, "max_zoom": t.MaxZoom,
		"tick_ms": d.cfg.Tick.Milliseconds(),
	})
}

// fencesJSON is the engine's fence set as a GeoJSON FeatureCollection.
func fencesJSON(set *fence.Set) []byte {
	b := []byte(`{"type":"FeatureCollection","features":[`)
	for i, f := range set.Fences() {
		if i > 0 {
			b = append(b, ',')
		}
		b = f.AppendGeoJSON(b)
	}
	return append(b, "]}"...)
}

func (d *Dashboard) fences(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/geo+json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(fencesJSON(d.eng.Fences()))
}

// mapDevice is a device on the map.
type mapDevice struct {
	ID       string   `json:"id"`
	Lat      float64  `json:"lat"`
	Lon      float64  `json:"lon"`
	Inside   []string `json:"inside"`
	LagMs    float64  `json:"lag_ms"`
	OffsetMs float64  `json:"offset_ms"`
	Clock    string   `json:"clock"`
	Buffered int      `json:"buffered"`
	LastSeen stamp    `json:"last_seen"`
	last     time.Time
}

// devicesJSON lists the mapDevices most recently heard devices.
func (h *hub) devicesJSON() ([]byte, error) {
	devs, err := h.devices()
	if err != nil {
		return nil, err
	}
	return json.Marshal(devs)
}

// devices returns the mapDevices most recently heard devices, by id.
func (h *hub) devices() ([]mapDevice, error) {
	devs := []mapDevice{} // [], not null, when there are none
	err := h.eng.Fleet(func(s *inspect.DeviceSummary) {
		if !s.HasPosition {
			return
		}
		devs = append(devs, mapDevice{
			ID: s.Device, Lat: s.Lat, Lon: s.Lon, Inside: append([]string{}, s.Inside...),
			LagMs: ms(s.WatermarkLag), OffsetMs: ms(s.ClockOffset), Clock: s.ClockState,
			Buffered: s.Buffered, LastSeen: stamp(s.LastArrival), last: s.LastArrival,
		})
	})
	if err != nil {
		return nil, err
	}
	if len(devs) > mapDevices {
		slices.SortFunc(devs, func(a, b mapDevice) int { return b.last.Compare(a.last) })
		devs = devs[:mapDevices]
	}
	slices.SortFunc(devs, func(a, b mapDevice) int { return cmp.Compare(a.ID, b.ID) })
	return devs, nil
}

// deviceJSON is the introspection endpoint's answer.
type deviceJSON struct {
	Device         string            `json:"device"`
	Taken          stamp             `json:"taken"`
	HoldMs         float64           `json:"hold_ms"`
	HighWater      stamp             `json:"high_water"`
	Watermark      stamp             `json:"watermark"`
	Committed      stamp             `json:"committed"`
	WatermarkLagMs float64           `json:"watermark_lag_ms"`
	ClockOffsetMs  float64           `json:"clock_offset_ms"`
	ClockShiftMs   float64           `json:"clock_shift_ms"`
	ClockState     string            `json:"clock_state"`
	ClockLearned   int               `json:"clock_learned"`
	Buffered       int               `json:"buffered"`
	BufferCap      int               `json:"buffer_cap"`
	Deferred       int               `json:"deferred"`
	Evaluated      uint32            `json:"evaluated"`
	LastArrival    stamp             `json:"last_arrival"`
	Position       *[2]float64       `json:"position"` // [lat, lon]
	Pending        []pendingJSON     `json:"pending"`
	History        []committedJSON   `json:"history"`
	Received       []pendingJSON     `json:"received"`
	Fences         []fenceJSON       `json:"fences"`
	Late           int               `json:"late"`
	LatePerMin     float64           `json:"late_per_min"`
	Transitions    []json.RawMessage `json:"transitions"`
}

type pendingJSON struct {
	Event       stamp   `json:"event_time"`
	Stamp       stamp   `json:"stamp"`
	Ingest      stamp   `json:"ingest_time"`
	Clamped     bool    `json:"clamped"`
	ClampReason string  `json:"clamp_reason,omitempty"`
	Lat         float64 `json:"lat"`
	Lon         float64 `json:"lon"`
	// ReleaseBy is, for a buffered ping, when its hold runs out: it is
	// released then at the latest, sooner if the watermark passes it.
	ReleaseBy *stamp `json:"release_by,omitempty"`
}

func pingJSON(event, stamped, ingest time.Time, clamp clock.ClampReason, lat, lon float64) pendingJSON {
	pj := pendingJSON{Event: stamp(event), Stamp: stamp(stamped), Ingest: stamp(ingest), Clamped: clamp.Clamped(), Lat: lat, Lon: lon}
	if clamp.Clamped() {
		pj.ClampReason = clamp.String()
	}
	return pj
}

type committedJSON struct {
	Event  stamp   `json:"event_time"`
	Ingest stamp   `json:"ingest_time"`
	Lat    float64 `json:"lat"`
	Lon    float64 `json:"lon"`
	Acc    float64 `json:"acc,omitempty"`
	// SetAside: the speed gate set the fix aside (docs/fences.md).
	SetAside bool `json:"set_aside,omitempty"`
	// Rule is what decided the device's membership at the fix, Held the
	// fences whose state it kept against the position (docs/clock.md).
	Rule string   `json:"rule"`
	Held []string `json:"held,omitempty"`
	// Standing: the device stood still at the fix (docs/fences.md).
	Standing bool `json:"standing,omitempty"`
}

type fenceJSON struct {
	Fence   string `json:"fence"`
	Inside  bool   `json:"inside"`
	Dwelled bool   `json:"dwelled"`
	Since   stamp  `json:"since"`
}

// device answers GET /api/devices/{id}: the device's engine state, its
// late count and its recent transitions; 404 when the engine holds none,
// or with ?missing=200 a 200 saying so: the page's open panel of a
// device the engine just evicted is not an error in its console.
func (d *Dashboard) device(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, ok, err := d.eng.Inspect(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !ok {
		const why = "no such device in the engine (never seen, or evicted after --idle-timeout outside every fence)"
		if r.URL.Query().Get("missing") == "200" {
			writeJSON(w, map[string]any{"device": id, "missing": why})
			return
		}
		http.Error(w, why, http.StatusNotFound)
		return
	}
	out := deviceJSON{
		Device: v.Device, Taken: stamp(v.Taken), HoldMs: ms(v.Hold),
		HighWater: stamp(v.HighWater), Watermark: stamp(v.Watermark), Committed: stamp(v.Committed),
		WatermarkLagMs: ms(v.WatermarkLag), ClockOffsetMs: ms(v.ClockOffset), ClockShiftMs: ms(v.ClockShift),
		ClockState: v.ClockState,
		Buffered:   v.Buffered, BufferCap: v.BufferCap, Deferred: v.Deferred, Evaluated: v.Evaluated,
		LastArrival: stamp(v.LastArrival),
		Pending:     []pendingJSON{}, History: []committedJSON{}, Received: []pendingJSON{}, Fences: []fenceJSON{},
	}
	if v.HasPosition {
		out.Position = &[2]float64{v.Lat, v.Lon}
	}
	for _, p := range v.Pending {
		pj := pingJSON(p.Event, p.Stamp, p.Ingest, p.Clamp, p.Lat, p.Lon)
		by := stamp(p.Ingest.Add(v.Hold))
		pj.ReleaseBy = &by
		out.Pending = append(out.Pending, pj)
	}
	for _, p := range v.Received {
		out.Received = append(out.Received, pingJSON(p.Event, p.Stamp, p.Ingest, p.Clamp, p.Lat, p.Lon))
	}
	for _, c := range v.History {
		out.History = append(out.History, committedJSON{Event: stamp(c.Event), Ingest: stamp(c.Ingest), Lat: c.Lat, Lon: c.Lon, Acc: c.Acc, SetAside: c.SetAside, Rule: c.Rule, Held: c.Held, Standing: c.Standing})
	}
	for _, f := range v.Fences {
		out.Fences = append(out.Fences, fenceJSON{Fence: f.Fence, Inside: f.Inside, Dwelled: f.Dwelled, Since: stamp(f.Since)})
	}
	n, span := d.hub.lateOf(id)
	out.Late, out.LatePerMin = n, float64(n)/span.Minutes()
	out.Transitions = d.hub.recentOf(id)
	if out.Transitions == nil {
		out.Transitions = []json.RawMessage{}
	}
	writeJSON(w, out)
}

// fleetRow is one device in the fleet view.
type fleetRow struct {
	Device     string  `json:"device"`
	LagMs      float64 `json:"watermark_lag_ms"`
	OffsetMs   float64 `json:"clock_offset_ms"`
	Clock      string  `json:"clock_state"`
	Buffered   int     `json:"buffered"`
	Deferred   int     `json:"deferred"`
	Late       int     `json:"late"`
	LatePerMin float64 `json:"late_per_min"`
	LastSeen   stamp   `json:"last_seen"`
}

// fleetTop is how many devices each list of the fleet view holds.
const fleetTop = 20

// fleet answers GET /api/fleet: the devices with the largest watermark
// lag, the largest clock offset (either way) and the most late pings —
// the operator's "who is misbehaving" lists.
func (d *Dashboard) fleet(w http.ResponseWriter, _ *http.Request) {
	var rows []fleetRow
	err := d.eng.Fleet(func(s *inspect.DeviceSummary) {
		rows = append(rows, fleetRow{Device: s.Device, LagMs: ms(s.WatermarkLag), OffsetMs: ms(s.ClockOffset),
			Clock: s.ClockState, Buffered: s.Buffered, Deferred: s.Deferred, LastSeen: stamp(s.LastArrival)})
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	h := d.hub
	h.mu.Lock()
	span := h.lateSpan().Minutes()
	for i := range rows {
		rows[i].Late = h.late.cur[rows[i].Device] + h.late.prev[rows[i].Device]
		rows[i].LatePerMin = float64(rows[i].Late) / span
	}
	h.mu.Unlock()
	top := func(key func(*fleetRow) float64) []fleetRow {
		s := slices.Clone(rows)
		slices.SortStableFunc(s, func(a, b fleetRow) int { return cmp.Compare(key(&b), key(&a)) })
		out := []fleetRow{}
		for _, r := range s[:min(len(s), fleetTop)] {
			if key(&r) > 0 {
				out = append(out, r)
			}
		}
		return out
	}
	writeJSON(w, map[string]any{
		"devices":   len(rows),
		"by_lag":    top(func(r *fleetRow) float64 { return r.LagMs }),
		"by_offset": top(func(r *fleetRow) float64 { return max(r.OffsetMs, -r.OffsetMs) }),
		"by_late":   top(func(r *fleetRow) float64 { return r.LatePerMin }),
	})
}
