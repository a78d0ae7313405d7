package mochilog

import (
	"context"
	"log/slog"
	"sync"
)

// Gate holds mochi's log lines while the server starts. A start that
// fails after mochi was set up (a data dir that is a file, a capture file
// that cannot be opened) would otherwise print mochi's "added hook",
// "stopping hook" and "server stopped" lines above its error, which reads
// as a start; one that succeeds prints them in order before the server
// says it is serving.
type Gate struct {
	mu      sync.Mutex
	held    []heldRecord
	open    bool // Release: records pass through
	dropped bool // Drop: only warnings and errors pass through
}

type heldRecord struct {
	h   slog.Handler
	ctx context.Context
	r   slog.Record
}

// Hold returns h, holding every record until g's Release or Drop.
func Hold(h slog.Handler) (slog.Handler, *Gate) {
	g := &Gate{}
	return holdHandler{h, g}, g
}

// Release writes the held records, in order, and lets later ones through.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
	for _, x := range g.held {
		_ = x.h.Handle(x.ctx, x.r)
	}
	g.held = nil
}

// Drop writes the held warnings and errors, discards the rest, and from
// then on lets only warnings and errors through: the start failed, and
// its error says why.
func (g *Gate) Drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropped = true
	for _, x := range g.held {
		if x.r.Level >= slog.LevelWarn {
			_ = x.h.Handle(x.ctx, x.r)
		}
	}
	g.held = nil
}

type holdHandler struct {
	slog.Handler
	g *Gate
}

func (h holdHandler) Handle(ctx context.Context, r slog.Record) error {
	g := h.g
	g.mu.Lock()
	switch {
	case g.dropped && r.Level < slog.LevelWarn:
		g.mu.Unlock()
		return nil
	case !g.open && !g.dropped:
		g.held = append(g.held, heldRecord{h.Handler, ctx, r.Clone()})
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return h.Handler.Handle(ctx, r)
}

func (h holdHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return holdHandler{h.Handler.WithAttrs(as), h.g}
}

func (h holdHandler) WithGroup(name string) slog.Handler {
	return holdHandler{h.Handler.WithGroup(name), h.g}
}
