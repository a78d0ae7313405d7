package hooks

import (
	"crypto/tls"
	"log/slog"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
)

// Access is edgefence's only authentication and ACL hook. mochi OR-s the
// answers of auth hooks, so nothing else that allows may be registered
// beside it: with no user file it is also the "anonymous" policy.
type Access struct {
	mqtt.HookBase
	users     *auth.File // nil: anonymous, every client may do what an admin may
	telemetry []ingest.TelemetryFilter
	reserved  []string // filters only the server publishes on
	readable  []string // filters a dashboard may read
	prefix    string
	log       *slog.Logger
	logins    *loginGate // nil: anonymous
	refusals  publishRefusals

	// The client ids held, by user, with a user file (see claimID).
	idsMu  sync.Mutex
	ids    map[string]idHolder
	ownIDs bool // a device's client id must be its name (RequireOwnClientIDs)
}

// NewAccess returns the hook. users nil means anonymous access (for a
// loopback or trusted network); the server's own topics stay reserved
// either way.
func NewAccess(users *auth.File, telemetry []ingest.TelemetryFilter, prefix, late, reject string, log *slog.Logger) *Access {
	return &Access{
		users:     users,
		telemetry: telemetry,
		prefix:    prefix,
		reserved:  []string{prefix + "/#", late + "/#", reject + "/#", "$SYS/#"},
		readable:  []string{prefix + "/#", late + "/#", reject + "/#"},
		log:       log,
		ids:       map[string]idHolder{},
		logins:    newLoginGate(users, nil),
		refusals:  publishRefusals{count: new(metrics.Counter)},
	}
}

// ServerTopics adds filters the server publishes on besides its own
// output (Home Assistant discovery): no client may publish there, and a
// dashboard may read them. Call it before clients connect.
func (h *Access) ServerTopics(filters ...string) {
	h.reserved = append(h.reserved, filters...)
	h.readable = append(h.readable, filters...)
}

// CountIn registers the login and refusal counters in set (by default
// they are counted nowhere).
func (h *Access) CountIn(set *metrics.Set) {
	h.logins = newLoginGate(h.users, set)
	h.refusals.count = set.NewCounter(refusedMetric)
}

// ID names the hook.
func (h *Access) ID() string { return "edgefence-access" }

// Provides says which hook events the hook handles.
func (h *Access) Provides(b byte) bool {
	switch b {
	case mqtt.OnConnectAuthenticate, mqtt.OnACLCheck, mqtt.OnPacketRead,
		mqtt.OnWill, mqtt.OnDisconnect, mqtt.OnClientExpired:
		return true
	}
	return false
}

// OnPacketReadInPlace passes a CONNECT's zero-length password on as none
// (emptyPassword), and readies a client's PUBLISH for mochi's ACL check,
// which sees the packet as it was sent:
//   - an MQTT 5 publish by topic alias alone has no topic name: the alias
//     is resolved here (as mochi does before its ACL check), so that the
//     $SYS check below sees the topic it stands for.
//   - mochi drops a publish on $SYS before asking the ACL, without an
//     acknowledgement, so an MQTT 5 QoS 1 or 2 publisher would wait for one
//     forever. It is refused here as the other reserved topics are: 0x87
//     for MQTT 5, a disconnect for 3.1.1 (what mochi does to a refused QoS
//     1 publish); QoS 0 is left to mochi to drop. Each is counted and
//     logged as a refusal (publishRefusals).
func (h *Access) OnPacketReadInPlace(cl *mqtt.Client, pk *packets.Packet) error {
	if pk.FixedHeader.Type == packets.Connect {
		emptyPassword(pk)
		return nil
	}
	if pk.FixedHeader.Type != packets.Publish {
		return nil
	}
	if pk.TopicName == "" && pk.Properties.TopicAliasFlag && pk.Properties.TopicAlias > 0 {
		// Set with an empty topic only looks the alias up (mochi patch
		// 0017): an alias never set stays unset and its topic empty, and
		// mochi disconnects the client with 0x82, Protocol Error.
		pk.TopicName = cl.State.TopicAliases.Inbound.Set(pk.Properties.TopicAlias, "")
	}
	t := pk.TopicName
	if len(t) < len(mqtt.SysPrefix) || !strings.EqualFold(t[:len(mqtt.SysPrefix)], mqtt.SysPrefix) {
		return nil
	}
	return h.refuseSys(cl, pk)
}

// OnPacketRead is OnPacketReadInPlace on a copy, for mochi's Hook
// interface; mochi calls OnPacketReadInPlace, which keeps the packet off
// the reader's stack (mochi patch 0024).
func (h *Access) OnPacketRead(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	err := h.OnPacketReadInPlace(cl, &pk)
	return pk, err
}

// refuseSys refuses a publish on $SYS (OnPacketReadInPlace), in a frame
// of its own: the acknowledgement it builds is on the reader's stack only
// when one is refused.
//
//go:noinline
func (h *Access) refuseSys(cl *mqtt.Client, pk *packets.Packet) error {
	h.refusals.refused(h.log, cl, pk.TopicName)
	if pk.FixedHeader.Qos == 0 {
		return nil
	}
	if cl.Properties.ProtocolVersion < 5 {
		return packets.ErrRejectPacket // mochi closes the connection
	}
	ack := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Puback},
		PacketID:    pk.PacketID,
		ReasonCode:  packets.ErrNotAuthorized.Code,
		Properties:  packets.Properties{ReasonString: packets.ErrNotAuthorized.Reason},
	}
	if pk.FixedHeader.Qos == 2 {
		ack.FixedHeader.Type = packets.Pubrec
	}
	_ = cl.WritePacket(ack) // mochi then drops the packet unacknowledged
	return nil
}

// OnConnectAuthenticate admits a client by password or, when it presented
// a verified client certificate, by the certificate's common name; a
// username given beside a certificate must be the same name. A client
// asking for MQTT 5 enhanced authentication is refused. Then the CONNECT
// must pass admit: its will and its client id.
func (h *Access) OnConnectAuthenticate(cl *mqtt.Client, pk packets.Packet) bool {
	if pk.Properties.AuthenticationMethod != "" {
		// mochi has no enhanced authentication (AUTH exchange): a client
		// asking for one is refused rather than let in unauthenticated.
		h.log.Warn("refused connection: enhanced authentication is not supported", "method", pk.Properties.AuthenticationMethod, "remote", cl.Net.Remote)
		return false
	}
	if !h.authenticate(cl, pk) {
		return false
	}
	if code := h.admit(cl, pk); code != packets.CodeSuccess {
		refuseConnect(cl, code)
		return false
	}
	return true
}

// authenticate checks the client's password or certificate.
func (h *Access) authenticate(cl *mqtt.Client, pk packets.Packet) bool {
	if h.users == nil {
		return true
	}
	name := string(pk.Connect.Username)
	if cn := certName(cl); cn != "" {
		if (name == "" || name == cn) && h.users.User(cn) != nil {
			cl.Properties.Username = []byte(cn) // the ACL reads the name from here
			return true
		}
		h.log.Warn("refused connection: certificate name does not match a user", "cn", cn, "username", name, "remote", cl.Net.Remote)
		return false
	}
	switch code := h.login(name, pk.Connect.Password, cl.Net.Remote); code {
	case packets.CodeSuccess:
		return true
	case packets.ErrBadUsernameOrPassword:
		return false // mochi answers 0x86 (3.1.1: 0x05)
	default:
		// mochi would answer 0x86: this CONNACK is written here, and the
		// connection stopped so that mochi's own fails to be written.
		if cl.Properties.ProtocolVersion < 5 {
			code = packets.Err3ServerUnavailable
		}
		_ = cl.WritePacket(packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Connack},
			ReasonCode:  code.Code,
			Properties:  packets.Properties{ReasonString: code.Reason},
		})
		cl.Stop(code)
		return false
	}
}

// login checks a username and password (always success for anonymous
// access) within the login bounds (see loginGate), logs a refusal naming
// remote, and returns its CONNACK code: bad username or
// password, connection rate exceeded (remote's back-off) or server busy.
func (h *Access) login(name string, password []byte, remote string) packets.Code {
	if h.users == nil {
		return packets.CodeSuccess
	}
	code := h.logins.check(name, password, remote)
	if code != packets.CodeSuccess {
		h.logins.logRefusal(h.log, code, name, remote)
	}
	return code
}

// Login checks a username and password for a login that does not come
// over MQTT (the dashboard's HTTP), within the same bounds as MQTT logins:
// the shared verification slots and remote's back-off, counted and logged
// alike. It returns the user, or nil (also without a user file, where
// nobody logs in).
func (h *Access) Login(name string, password []byte, remote string) *auth.User {
	if h.users == nil || h.login(name, password, remote) != packets.CodeSuccess {
		return nil
	}
	return h.users.User(name)
}

// certName is the common name of a client's verified certificate, or "".
// The connection is a *tls.Conn on MQTTS, and on secure WebSocket a
// wrapper that passes on the TLS state.
func certName(cl *mqtt.Client) string {
	c, ok := cl.Net.Conn.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return ""
	}
	st := c.ConnectionState()
	if len(st.VerifiedChains) == 0 || len(st.PeerCertificates) == 0 {
		return ""
	}
	return st.PeerCertificates[0].Subject.CommonName
}

// OnACLCheck decides publishes (write) and subscriptions (read). A
// refused MQTT 5 QoS 1 publish gets 0x87 from mochi; a refused filter gets
// 0x87 in the SUBACK. A refused publish is counted and logged here
// (publishRefusals).
func (h *Access) OnACLCheck(cl *mqtt.Client, topic string, write bool) bool {
	ok := h.allows(cl.Properties.Username, topic, write)
	if write && !ok {
		h.refusals.refused(h.log, cl, topic)
	}
	return ok
}

// allows is OnACLCheck for the user named user.
func (h *Access) allows(user []byte, topic string, write bool) bool {
	if write {
		for _, r := range h.reserved {
			if ingest.Matches(r, topic) {
				return false // nobody forges the server's output, whatever its role
			}
		}
	}
	if h.users == nil {
		return true
	}
	u := h.users.User(string(user))
	if u == nil {
		return false
	}
	switch u.Role {
	case auth.RoleAdmin:
		return true
	case auth.RoleDevice:
		if write {
			return h.ownTelemetry(u.Name, topic)
		}
		return u.ReadOwn && ingest.Covers(h.prefix+"/+/"+u.Name, ingest.Unshare(topic))
	case auth.RoleGateway:
		return write && h.anyTelemetry(topic)
	case auth.RoleDashboard:
		if write {
			return false
		}
		f := ingest.Unshare(topic)
		for _, r := range h.readable {
			if ingest.Covers(r, f) {
				return true
			}
		}
	}
	return false
}

// anyTelemetry reports whether topic is a telemetry topic with a valid
// device id.
func (h *Access) anyTelemetry(topic string) bool {
	for i := range h.telemetry {
		if _, ok, err := h.telemetry[i].Match(topic); ok && err == nil {
			return true
		}
	}
	return false
}

// ownTelemetry reports whether topic is a telemetry topic of device name,
// on a filter whose topic names the device: where the body names it
// (ingest.TelemetryFilter.BodyNamed), a device could speak for another.
func (h *Access) ownTelemetry(name, topic string) bool {
	for i := range h.telemetry {
		if h.telemetry[i].BodyNamed() {
			continue
		}
		if id, ok, err := h.telemetry[i].Match(topic); ok && err == nil && id == name {
			return true
		}
	}
	return false
}
