// Package probe reads what a load run measures outside its own code: a
// process's CPU time and memory from /proc, each CPU's busy share from
// /proc/stat, and the samples of a Prometheus text endpoint (the broker's
// /metrics).
package probe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/<pid>/stat CPU times: 100 on
// every Linux architecture Go supports.
const clockTick = 100

// ProcStat is a process's CPU time and memory from /proc.
type ProcStat struct {
	CPU time.Duration // user + system
	RSS int64         // VmRSS, bytes
	HWM int64         // VmHWM (peak RSS), bytes
}

// ReadProc reads /proc/<pid>/stat and /proc/<pid>/status; pid 0 is the
// calling process.
func ReadProc(pid int) (ProcStat, error) {
	dir := "/proc/self"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	var st ProcStat
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return st, err
	}
	// The command name (field 2) may hold spaces; fields restart after ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return st, fmt.Errorf("%s/stat: no ')'", dir)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return st, fmt.Errorf("%s/stat: %d fields", dir, len(f))
	}
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	stt, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("%s/stat: bad utime/stime %q %q", dir, f[11], f[12])
	}
	st.CPU = time.Duration(ut+stt) * time.Second / clockTick
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return st, err
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		line := sc.Text()
		for _, k := range []struct {
			name string
			p    *int64
		}{{"VmRSS:", &st.RSS}, {"VmHWM:", &st.HWM}} {
			if v, ok := strings.CutPrefix(line, k.name); ok {
				fs := strings.Fields(v)
				if len(fs) > 0 {
					n, _ := strconv.ParseInt(fs[0], 10, 64)
					*k.p = n << 10 // kB
				}
			}
		}
	}
	return st, nil
}

// Metrics is one scrape of a Prometheus text endpoint: each sample by its
// name with labels exactly as exposed, e.g.
// `edgefence_shed_total{stage="queue"}`.
type Metrics map[string]float64

// Scrape fetches and parses url (bounded by a 5 s timeout).
func Scrape(ctx context.Context, url string) (Metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads the Prometheus text format.
func ParseMetrics(r io.Reader) (Metrics, error) {
	m := Metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// Has reports whether the sample exists.
func (m Metrics) Has(name string) bool { _, ok := m[name]; return ok }

// CPUTimes are the busy and total jiffies of each CPU, from /proc/stat.
type CPUTimes struct{ Busy, Total []int64 }

// ReadCPUTimes reads /proc/stat.
func ReadCPUTimes() (CPUTimes, error) {
	var t CPUTimes
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var busy, total int64
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i >= 8 { // guest times are already in user and nice
				break
			}
			total += n
			if i != 3 && i != 4 { // idle, iowait
				busy += n
			}
		}
		t.Busy, t.Total = append(t.Busy, busy), append(t.Total, total)
	}
	return t, nil
}

// BusyShares is each CPU's busy share between two readings.
func BusyShares(a, b CPUTimes) []float64 {
	n := min(len(a.Busy), len(b.Busy))
	s := make([]float64, n)
	for i := range n {
		if dt := b.Total[i] - a.Total[i]; dt > 0 {
			s[i] = float64(b.Busy[i]-a.Busy[i]) / float64(dt)
		}
	}
	return s
}
