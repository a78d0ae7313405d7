package bridge

import (
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/clienttls"
)

// packetTimeout is paho's wait for a PUBACK. The sender publishes with its
// own context; a PUBACK may legitimately take as long as the broker is
// away, because paho resends unacknowledged publishes on the same session
// when it comes back, and the sender must wait for that answer rather
// than publish again (which would duplicate the transition).
const packetTimeout = 365 * 24 * time.Hour

// sendAcksInterval is how often paho sends the acknowledgements marked
// since; ackFlushWait is how long a graceful Close lets the last ones go.
const (
	sendAcksInterval = 5 * time.Millisecond
	ackFlushWait     = 10 * sendAcksInterval
)

// clientConfig is the autopaho configuration: MQTT 5, a persistent session
// under a stable client id, manual acknowledgement of telemetry.
func (b *Bridge) clientConfig(u *url.URL) (autopaho.ClientConfig, error) {
	cfg := &b.cfg
	var tc *tls.Config
	if tlsScheme(u.Scheme) {
		var err error
		if tc, err = tlsConfig(cfg, u.Hostname()); err != nil {
			return autopaho.ClientConfig{}, err
		}
	}
	user, pass := cfg.Username, cfg.Password
	if user == "" && u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	clean := *u
	clean.User = nil // never logged or sent as part of the URL
	recvMax := cfg.ReceiveMaximum
	var logged atomic.Int64
	return autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{&clean},
		TlsCfg:                        tc,
		KeepAlive:                     uint16(cfg.KeepAlive / time.Second),
		CleanStartOnInitialConnection: false,
		SessionExpiryInterval:         uint32(cfg.SessionExpiry / time.Second),
		ReconnectBackoff:              backoff(cfg.ReconnectMin, cfg.ReconnectMax),
		ConnectTimeout:                cfg.ConnectTimeout,
		ConnectUsername:               user,
		ConnectPassword:               []byte(pass),
		OnConnectionUp:                b.onConnectionUp,
		OnConnectionDown: func() bool {
			b.connected.Store(false)
			b.log.Warn("upstream connection lost; reconnecting", "upstream", clean.String())
			return true
		},
		OnConnectError: func(err error) {
			// One line per 10 s: a broker down for hours must not fill the log.
			now := time.Now().Unix()
			if last := logged.Load(); now-last >= 10 && logged.CompareAndSwap(last, now) {
				b.log.Warn("cannot connect upstream; retrying", "upstream", clean.String(), "error", err)
			}
		},
		ConnectPacketBuilder: func(cp *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			if cp.Properties == nil {
				cp.Properties = &paho.ConnectProperties{}
			}
			cp.Properties.ReceiveMaximum = &recvMax
			return cp, nil
		},
		DisconnectPacketBuilder: func() *paho.Disconnect {
			if b.killed.Load() {
				return nil // a crash sends nothing
			}
			return &paho.Disconnect{ReasonCode: 0}
		},
		ClientConfig: paho.ClientConfig{
			ClientID:                   cfg.ClientID,
			OnPublishReceived:          []func(paho.PublishReceived) (bool, error){b.onPublish},
			EnableManualAcknowledgment: true,
			// Acknowledgements go out in batches this often; with the
			// default 50 ms and a broker sending 20 at a time (Mosquitto's
			// max_inflight_messages for clients that do not say), a bridge
			// would take at most 400 pings a second.
			SendAcksInterval: sendAcksInterval,
			PacketTimeout:    packetTimeout,
			OnServerDisconnect: func(d *paho.Disconnect) {
				reason := ""
				if d.Properties != nil {
					reason = d.Properties.ReasonString
				}
				b.log.Warn("upstream disconnected the bridge", "reason_code", fmt.Sprintf("0x%02x", d.ReasonCode), "reason", reason)
			},
		},
	}, nil
}

// backoff is the delay before connection attempt n: none before the
// first, then from min doubling to max, with jitter so that a fleet of
// bridges does not reconnect in step.
func backoff(lo, hi time.Duration) autopaho.Backoff {
	return func(attempt int) time.Duration {
		if attempt <= 0 {
			return 0
		}
		d := lo
		for i := 1; i < attempt && d < hi; i++ {
			d *= 2
		}
		d = min(d, hi)
		return d/2 + rand.N(d/2+1)
	}
}

// tlsConfig verifies the broker against CA (or the system pool) and
// presents Cert when given.
func tlsConfig(cfg *Config, host string) (*tls.Config, error) {
	tc, err := clienttls.Config(cfg.CA, cfg.Cert, cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("--ca, --cert, --key: %w", err)
	}
	tc.ServerName = host
	return tc, nil
}
