package fleet

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// epoch0 and gps1980 are the stamps a cold-booted tracker counts from
// until its GPS attaches.
var (
	epoch0  = time.Unix(0, 0)
	gps1980 = time.Date(1980, 1, 6, 0, 0, 0, 0, time.UTC)
)

// sample is one ping: where and when the device really was, what it
// reported, and when the server received it. Times are ns since the
// simulation's start (the server's clock, which is also true time).
type sample struct {
	at       int64   // true time of the fix
	lat, lon float64 // true position
	rlat     float64 // reported position (with GPS noise when on)
	rlon     float64
	acc      float64
	outlier  bool  // the reported position is an outlier
	stamp    int64 // the device's stamp, Unix ns (ms resolution, as trackers send)
	arrival  int64 // when the server received it
}

// faults counts what was injected, for the report.
type faults struct {
	Steps, BootPings, Outages, BacklogPings, NewestFirstBacklogs int64
	Reordered                                                    int64 // pings that arrived after a later-fixed ping
	DelayedPastHold                                              int64 // transport delay over 500 ms
	Outliers, Parked                                             int64 // outlier fixes; devices that parked at an edge
	ParkedNs                                                     int64 // how long they stood there, in all
}

func (f *faults) add(o *faults) {
	f.Steps += o.Steps
	f.BootPings += o.BootPings
	f.Outages += o.Outages
	f.BacklogPings += o.BacklogPings
	f.NewestFirstBacklogs += o.NewestFirstBacklogs
	f.Reordered += o.Reordered
	f.DelayedPastHold += o.DelayedPastHold
	f.Outliers += o.Outliers
	f.Parked += o.Parked
	f.ParkedNs += o.ParkedNs
}

// device is what the scoring needs to know of a device beyond its pings.
type device struct {
	period int64    // between fixes, ns
	sigma  float64  // per-axis deviation of its true position error, metres (0: no noise)
	park   *parking // its stop at a fence edge, or nil
}

// parked reports whether the device stood at its parking spot at true time at.
func (d *device) parked(at int64) bool {
	return d.park != nil && d.park.from >= 0 && at >= d.park.from && at < d.park.to
}

const mPerDegLat = 111_320.0

// generate fills out with device i's pings in true-time order. Each
// device has its own random streams, seeded by (seed, i), so a device's
// pings do not depend on how devices are spread over workers. fences are
// where a parking device looks for an edge.
func (c *Config) generate(i int, start time.Time, fences []*fence.Fence, out []sample, f *faults) ([]sample, device) {
	rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
	out = out[:0]
	dur := int64(c.Duration)
	period := int64(float64(time.Second) / (c.MinHz + rng.Float64()*(c.MaxHz-c.MinHz)))
	half := c.AreaKm * 500
	cosLat := math.Cos(c.CenterLat * math.Pi / 180)
	x, y := (rng.Float64()*2-1)*half, (rng.Float64()*2-1)*half
	wx, wy := (rng.Float64()*2-1)*half, (rng.Float64()*2-1)*half
	speed := c.MinSpeed + rng.Float64()*(c.MaxSpeed-c.MinSpeed)
	offset := int64(0)
	if c.ClockOffset > 0 {
		offset = int64((rng.Float64()*2 - 1) * float64(c.ClockOffset))
	}
	sigma := 0.0
	if c.DelayMedian > 0 && c.DelayP99 > c.DelayMedian {
		sigma = math.Log(float64(c.DelayP99)/float64(c.DelayMedian)) / 2.3263478740408408
	}
	nextStep := poisson(rng, c.HandoverPerH, 0)
	nextBoot, bootEnd, bootEpoch := poisson(rng, c.ColdBootPerH, 0), int64(-1), int64(0)
	nextOutage, outageEnd, backlog := poisson(rng, c.OutagePerH, 0), int64(-1), 0
	newestFirst := false
	dev := device{period: period}
	var rx *receiver
	if c.GPSNoise {
		rx = c.newReceiver(i)
		dev.sigma = rx.sigma
		dev.park = c.newParking(rx.rng)
	}
	pk := dev.park

	for t := rng.Int64N(period); t < dur; t += period {
		if pk != nil && pk.from < 0 && !pk.heading && t >= pk.start {
			// Head for a spot near the nearest edge, inside or outside.
			var ok bool
			if pk.x, pk.y, ok = c.spot(fences, x, y, (rx.rng.Float64()*2-1)*c.ParkNear); ok {
				wx, wy, pk.heading = pk.x, pk.y, true
			} else {
				pk, dev.park = nil, nil
			}
		}
		// Move toward the waypoint; pick a new one on arrival. A parked
		// device stands still.
		for step := speed * float64(period) / 1e9; step > 0 && !dev.parked(t); {
			dx, dy := wx-x, wy-y
			d := math.Hypot(dx, dy)
			if d > step {
				x, y = x+dx/d*step, y+dy/d*step
				break
			}
			x, y, step = wx, wy, step-d
			if pk != nil && pk.heading {
				pk.heading, pk.from, pk.to = false, t, t+pk.dur
				f.Parked++
				f.ParkedNs += min(pk.to, dur) - t
				break
			}
			wx, wy = (rng.Float64()*2-1)*half, (rng.Float64()*2-1)*half
		}
		for nextStep <= t {
			s := c.StepMin + time.Duration(rng.Int64N(int64(c.StepMax-c.StepMin)+1))
			if rng.IntN(2) == 0 {
				s = -s
			}
			offset += int64(s)
			f.Steps++
			nextStep = poisson(rng, c.HandoverPerH, nextStep)
		}
		if nextBoot <= t && bootEnd < t {
			bootEnd = t + int64(c.AttachMin) + rng.Int64N(int64(c.AttachMax-c.AttachMin)+1)
			bootEpoch = epoch0.UnixNano()
			if rng.IntN(2) == 0 {
				bootEpoch = gps1980.UnixNano()
			}
			bootEpoch -= t // a stamp is bootEpoch + t: counting from boot
			nextBoot = poisson(rng, c.ColdBootPerH, bootEnd)
		}
		s := sample{at: t}
		s.lat = c.CenterLat + y/mPerDegLat
		s.lon = c.CenterLon + x/(mPerDegLat*cosLat)
		s.rlat, s.rlon = s.lat, s.lon
		if rx != nil {
			nx, ny, outlier := rx.fix(period)
			if outlier {
				s.outlier = true
				f.Outliers++
			}
			s.acc = rx.acc
			s.rlat += ny / mPerDegLat
			s.rlon += nx / (mPerDegLat * cosLat)
		}
		if t < bootEnd {
			s.stamp = bootEpoch + t
			f.BootPings++
		} else {
			s.stamp = start.UnixNano() + t + offset
		}
		s.stamp -= s.stamp % int64(time.Millisecond) // trackers send milliseconds
		delay := int64(0)
		if sigma > 0 || c.DelayMedian > 0 {
			delay = int64(float64(c.DelayMedian) * math.Exp(sigma*rng.NormFloat64()))
		}
		if delay > int64(500*time.Millisecond) {
			f.DelayedPastHold++
		}
		s.arrival = t + delay

		// Out of coverage: pings queue on the device until it is back,
		// then go out in one burst, 1 ms apart.
		if nextOutage <= t && outageEnd < t {
			outageEnd = t + int64(c.OutageMin) + rng.Int64N(int64(c.OutageMax-c.OutageMin)+1)
			newestFirst = rng.Float64() < c.NewestFirst
			backlog = len(out)
			f.Outages++
			if newestFirst {
				f.NewestFirstBacklogs++
			}
			nextOutage = poisson(rng, c.OutagePerH, outageEnd)
		}
		out = append(out, s)
		if t < outageEnd && (t+period >= outageEnd || t+period >= dur) {
			flushBacklog(out[backlog:], outageEnd, newestFirst, rng)
			f.BacklogPings += int64(len(out) - backlog)
		}
	}
	// Reordering as the server sees it: arrivals out of true-time order.
	latest := int64(math.MinInt64)
	for i := range out {
		if out[i].arrival < latest {
			f.Reordered++
		}
		latest = max(latest, out[i].arrival)
	}
	return out, dev
}

// flushBacklog gives queued pings their burst arrival times.
func flushBacklog(b []sample, at int64, newestFirst bool, rng *rand.Rand) {
	at += rng.Int64N(int64(200 * time.Millisecond)) // the link comes back
	for k := range b {
		pos := k
		if newestFirst {
			pos = len(b) - 1 - k
		}
		b[k].arrival = at + int64(pos)*int64(time.Millisecond)
	}
}

// poisson returns the next event time after from for a process with perH
// events per hour, or never.
func poisson(rng *rand.Rand, perH float64, from int64) int64 {
	if perH <= 0 {
		return math.MaxInt64
	}
	return from + int64(rng.ExpFloat64()/perH*float64(time.Hour))
}

// byArrival sorts a device's samples as the server receives them.
func byArrival(s []sample) {
	slices.SortStableFunc(s, func(a, b sample) int {
		switch {
		case a.arrival < b.arrival:
			return -1
		case a.arrival > b.arrival:
			return 1
		}
		return 0
	})
}
