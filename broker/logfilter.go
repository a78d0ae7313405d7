package broker

import (
	"context"
	"log/slog"
)

// quietHandler drops mochi's per-packet "publish packet error" lines: mochi
// logs one at error level for every publish a hook refuses, which a broken
// tracker would turn into a log flood. The telemetry hook logs refusals
// itself, rate-limited, and counts every one.
type quietHandler struct{ slog.Handler }

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "publish packet error" || r.Message == "publish packet rejected" {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
