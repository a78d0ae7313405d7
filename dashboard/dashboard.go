// Package dashboard serves the live page of serve on its HTTP port: a map
// of the fences and the devices' last positions, the transitions as they
// are published, one device's engine state (introspection) and the
// fleet's "who is misbehaving" view. The page and its vendored map library
// are embedded in the binary. Its data comes from the broker the way a
// dashboard's would (an inline subscription to the transition, late and
// reject topics) and from the engine's introspection, streamed to the
// browser as server-sent events on the same port (docs/dashboard.md).
package dashboard

import (
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

//go:embed static
var static embed.FS

// Engine is what the page reads of the engine.
type Engine interface {
	Inspect(device string) (inspect.DeviceView, bool, error)
	Fleet(visit func(*inspect.DeviceSummary)) error
	Fences() *fence.Set
}

// Feed delivers what the broker publishes on a topic filter, as a
// subscriber would receive it, until the returned function is called. fn
// is called from the publishing goroutine and must be quick.
type Feed interface {
	Subscribe(filter string, fn func(topic string, payload []byte)) (unsubscribe func(), err error)
}

// Login checks a username and password (within the broker's login bounds)
// and returns the user, or nil.
type Login func(name string, password []byte, remote string) *auth.User

// Config configures the page.
type Config struct {
	// Login is nil without --auth: the page is open, as the broker is.
	// With it, every request needs a dashboard or admin user (HTTP Basic
	// authentication).
	Login            Login
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	// Tiles is --map-tiles (ParseTiles): a tile URL template, a local
	// directory of tiles, or "" for no base map: an edge box is often
	// offline, and the page makes no request elsewhere unless told to.
	Tiles string
	// Attribution is the tile provider's credit, shown on the map.
	Attribution string
	// Tick is how often devices and fences are sent to open pages.
	Tick time.Duration
	Log  *slog.Logger
}

// DefaultTick is how often an open page gets the devices' positions.
const DefaultTick = time.Second

// Dashboard is the page and its endpoints.
type Dashboard struct {
	cfg   Config
	tiles Tiles
	eng   Engine
	hub   *hub
	mux   *http.ServeMux
}

// New subscribes to feed and returns the dashboard; Close unsubscribes.
// Subscribe before the broker loads its retained messages: the page wants
// what happens from now on, not what is retained.
func New(cfg Config, eng Engine, feed Feed) (*Dashboard, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	tiles, err := ParseTiles(cfg.Tiles, cfg.Attribution)
	if err != nil {
		return nil, err
	}
	h, err := newHub(&cfg, eng, feed)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{cfg: cfg, tiles: tiles, eng: eng, hub: h, mux: http.NewServeMux()}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, errors.Join(err, h.close())
	}
	files := http.FileServerFS(sub)
	d.mux.Handle("GET /{$}", files)
	d.mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	// Browsers ask for /favicon.ico whatever the page links.
	d.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "favicon.svg")
	})
	if tiles.Dir != "" {
		d.mux.Handle("GET /tiles/", http.StripPrefix("/tiles", tileServer(tiles.Dir)))
	}
	d.mux.HandleFunc("GET /api/config", d.config)
	d.mux.HandleFunc("GET /api/fences", d.fences)
	d.mux.HandleFunc("GET /api/devices/{id}", d.device)
	d.mux.HandleFunc("GET /api/fleet", d.fleet)
	d.mux.HandleFunc("GET /events", h.serveEvents)
	return d, nil
}

// Patterns lists the paths the dashboard serves, for mounting it beside
// other handlers.
func (d *Dashboard) Patterns() []string {
	return []string{"GET /{$}", "GET /static/", "GET /favicon.ico", "GET /tiles/", "GET /api/", "GET /events"}
}

// ServeHTTP serves the page and its endpoints, after the login.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.cfg.Login != nil && !d.authorised(w, r) {
		return
	}
	d.mux.ServeHTTP(w, r)
}

// authorised checks the request's Basic credentials: a dashboard or admin
// user may look; anyone else is asked to log in (401) or refused (403).
func (d *Dashboard) authorised(w http.ResponseWriter, r *http.Request) bool {
	name, password, ok := r.BasicAuth()
	var u *auth.User
	if ok {
		u = d.cfg.Login(name, []byte(password), r.RemoteAddr)
	}
	switch {
	case u == nil:
		w.Header().Set("WWW-Authenticate", `Basic realm="edgefence", charset="UTF-8"`)
		http.Error(w, "log in as a dashboard user", http.StatusUnauthorized)
		return false
	case u.Role != auth.RoleDashboard && u.Role != auth.RoleAdmin:
		http.Error(w, "the page needs a dashboard or admin user", http.StatusForbidden)
		return false
	}
	return true
}

// Close stops the page's subscriptions and ends its event streams.
func (d *Dashboard) Close() error { return d.hub.close() }
