package hooks

import (
	"strings"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/auth"
)

// What a CONNECT must pass once its user is known (docs/security.md): its
// will is a publish like any other, and with a user file a client id
// belongs to the user holding it.

// idHolder is the user holding a client id, and the mochi client holding
// it for them: connected, or keeping the session.
type idHolder struct {
	user string
	cl   *mqtt.Client
}

// RequireOwnClientIDs makes a device's client id its own: its username,
// or the username, '/' and anything (a device name has no '/', so no
// other device's id starts that way), and no other user's, whatever its
// role. An id the broker assigns, for a CONNECT without one, is random
// and nobody's: it is let through.
func (h *Access) RequireOwnClientIDs() { h.ownIDs = true }

// admit decides what an authenticated client's CONNECT asks beyond the
// login: a will it may publish, and a client id no other user holds.
func (h *Access) admit(cl *mqtt.Client, pk packets.Packet) packets.Code {
	user := cl.Properties.Username
	if code := h.serverIDCode(cl); code != packets.CodeSuccess {
		return code
	}
	if pk.Connect.WillFlag {
		if code := h.willCode(user, pk.Connect.WillTopic); code != packets.CodeSuccess {
			h.log.Warn("refused connection: a will on a topic the client may not publish on",
				"client", cl.ID, "username", string(user), "topic", pk.Connect.WillTopic, "remote", cl.Net.Remote)
			return code
		}
	}
	if h.users == nil {
		return packets.CodeSuccess // anonymous: nobody to hold an id
	}
	if h.ownIDs && pk.Connect.ClientIdentifier != "" && !h.ownID(string(user), cl.ID) {
		h.log.Warn("refused connection: a device's client id must be its username, or start with username/, and no other user may use a device's",
			"client", cl.ID, "username", string(user), "remote", cl.Net.Remote)
		return packets.ErrClientIdentifierNotValid
	}
	if holder, ok := h.claimID(cl, string(user)); !ok {
		h.log.Warn("refused connection: the client id is held by another user",
			"client", cl.ID, "username", string(user), "holder", holder, "remote", cl.Net.Remote)
		return packets.ErrClientIdentifierNotValid
	}
	return packets.CodeSuccess
}

// willCode is the reason a will on topic is refused to user, or success.
// mochi checks nothing of a will: it is checked as a PUBLISH would be,
// and, being the server's to send, never on a '$' topic.
func (h *Access) willCode(user []byte, topic string) packets.Code {
	switch {
	case strings.ContainsAny(topic, "+#"):
		return packets.ErrTopicNameInvalid
	case strings.HasPrefix(topic, "$") || !h.allows(user, topic, true):
		return packets.ErrNotAuthorized
	}
	return packets.CodeSuccess
}

// ownID reports whether id may be used by user under RequireOwnClientIDs:
// an id that is a device's (its name, or its name and '/…') by that
// device only, any other id by any user but a device.
func (h *Access) ownID(user, id string) bool {
	name, _, _ := strings.Cut(id, "/")
	if d := h.users.User(name); d != nil && d.Role == auth.RoleDevice {
		return name == user
	}
	u := h.users.User(user)
	return u == nil || u.Role != auth.RoleDevice
}

// claimID holds cl's id for user, unless another user holds it: it
// returns the holder and whether the claim succeeded. The check and the
// claim are one step, so two users racing for a free id cannot both win.
func (h *Access) claimID(cl *mqtt.Client, user string) (string, bool) {
	h.idsMu.Lock()
	defer h.idsMu.Unlock()
	if cur, held := h.ids[cl.ID]; held && cur.user != user {
		return cur.user, false
	}
	h.ids[cl.ID] = idHolder{user: user, cl: cl}
	return user, true
}

// OnDisconnect frees the client's id when mochi ends its session with the
// connection (expire), unless a newer connection of the same user holds
// it by now. A kept session keeps it held. mochi reports each session it
// restores from a store at start as a disconnect: such a session, not
// held yet, is held for the user it was stored with. A connection whose
// session another took over is none, even when its end is reported after
// that other's.
func (h *Access) OnDisconnect(cl *mqtt.Client, _ error, expire bool) {
	if h.users == nil {
		return
	}
	h.idsMu.Lock()
	defer h.idsMu.Unlock()
	cur, held := h.ids[cl.ID]
	switch {
	case expire && held && cur.cl == cl:
		delete(h.ids, cl.ID)
	case !expire && !held && !cl.IsTakenOver():
		h.ids[cl.ID] = idHolder{user: string(cl.Properties.Username), cl: cl}
	}
}

// OnClientExpired frees the id of a session mochi expired.
func (h *Access) OnClientExpired(cl *mqtt.Client) {
	h.idsMu.Lock()
	defer h.idsMu.Unlock()
	if cur, held := h.ids[cl.ID]; held && cur.cl == cl {
		delete(h.ids, cl.ID)
	}
}

// OnWill checks a will again as it is sent: the CONNECT was checked, and
// nothing may slip past that. mochi sends whatever will a hook returns (an
// error is only logged), so a refused will is returned empty: a message
// without a topic reaches no subscriber and is not retained.
func (h *Access) OnWill(cl *mqtt.Client, will mqtt.Will) (mqtt.Will, error) {
	if h.willCode(cl.Properties.Username, will.TopicName) == packets.CodeSuccess {
		return will, nil
	}
	h.log.Warn("dropped a will the client may not publish", "client", cl.ID,
		"username", string(cl.Properties.Username), "topic", will.TopicName)
	return mqtt.Will{}, nil
}

// refuseConnect answers CONNACK with code and closes the connection.
// mochi answers a refusal of the auth hook with 0x86 (3.1.1: 0x05),
// whatever its reason; once the connection is closed, mochi's own CONNACK
// is not sent. A 3.1.1 client gets the 3.1.1 return code, or, where 3.1.1
// has none (an invalid will topic is a malformed CONNECT there), no
// CONNACK.
func refuseConnect(cl *mqtt.Client, code packets.Code) {
	ack := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connack},
		ReasonCode:  code.Code,
		Properties:  packets.Properties{ReasonString: code.Reason},
	}
	c3, ok := connackCodes311[code.Code]
	switch {
	case cl.Properties.ProtocolVersion >= 5:
		_ = cl.WritePacket(ack)
	case ok:
		ack.ReasonCode, ack.Properties = c3, packets.Properties{}
		_ = cl.WritePacket(ack)
	}
	cl.Stop(code)
}

// connackCodes311 are the 3.1.1 return codes of the refusals of admit.
var connackCodes311 = map[byte]byte{
	packets.ErrClientIdentifierNotValid.Code: packets.Err3ClientIdentifierNotValid.Code,
	packets.ErrNotAuthorized.Code:            packets.Err3NotAuthorized.Code,
}

// emptyPassword passes a CONNECT's zero-length password on as none. It is
// a password (MQTT 3.1.1 and 5, 3.1.3.5), and a wrong one for every user;
// mochi refuses it as a protocol error, 0x82, which is no 3.1.1 code.
func emptyPassword(pk *packets.Packet) {
	if pk.Connect.PasswordFlag && len(pk.Connect.Password) == 0 {
		pk.Connect.PasswordFlag = false
	}
}
