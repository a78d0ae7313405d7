package hooks

import (
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// EngineClientID is the client id of the server's publisher, the inline
// client that publishes the engine's transitions.
const EngineClientID = "edgefence-engine"

// ServerClientID reports whether id is one the server uses for itself: its
// publisher's, and mochi's inline client's (Home Assistant's publishes). No
// network client may take one: nothing trusts an id, but a log line, a
// stored message's client or a session named after the server's own would
// speak for it.
func ServerClientID(id string) bool { return id == EngineClientID || id == mqtt.InlineClientId }

// serverIDLogged is the Unix second of the last refusal logged.
var serverIDLogged atomic.Int64

// serverIDCode refuses a network client's CONNECT with one of the
// server's client ids: 0x85 Client Identifier not valid (3.1.1: 0x02).
// Logged once a second.
func (h *Access) serverIDCode(cl *mqtt.Client) packets.Code {
	if cl.Net.Inline || !ServerClientID(cl.ID) {
		return packets.CodeSuccess
	}
	now := time.Now().Unix()
	if last := serverIDLogged.Load(); last != now && serverIDLogged.CompareAndSwap(last, now) {
		h.log.Warn("refused connection: the client id is reserved for the server itself; further refusals this second are not logged",
			"client", cl.ID, "username", string(cl.Properties.Username), "remote", cl.Net.Remote)
	}
	return packets.ErrClientIdentifierNotValid
}
