// Package cluster connects a worker to its NATS JetStream cluster: one
// NATS connection, the streams and buckets the workers share (created
// when missing), and, when the worker has NATS MQTT listeners to publish
// to, the MQTT connections to them, all secured by the worker's security
// settings.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Options are what Dial connects with: the worker Config's fields of
// the same names.
type Options struct {
	NATS, MQTT  string
	Security    security.Settings
	Name        string
	Partitions  int
	Replicas    int
	Lease       time.Duration
	DedupWindow time.Duration
	PingsMaxAge time.Duration
	Log         *slog.Logger
	// CheckpointStream is the checkpoint stream's configuration, as its
	// store needs it (checkpoint.StreamConfig).
	CheckpointStream jetstream.StreamConfig
}

// Conn is a worker's connection to its cluster.
type Conn struct {
	NATS        *nats.Conn
	JS          jetstream.JetStream
	Leases      jetstream.KeyValue
	Checkpoints jetstream.Stream
	History     jetstream.Stream
	// Retained is the bucket of the retained outputs' current values
	// (subjects.RetainedBucket), which serve --cluster nodes follow.
	Retained jetstream.KeyValue

	mq  mqtt.Client
	mqs []mqtt.Client // mq and more: the partitions publish over these (MQTT)
}

// SettingsError is a Dial error the security settings cause (a file
// that cannot be read), not the cluster: retrying does not help.
type SettingsError struct{ Err error }

// Error returns the settings' error message, as it was.
func (e *SettingsError) Error() string { return e.Err.Error() }

// Unwrap returns the settings' error.
func (e *SettingsError) Unwrap() error { return e.Err }

// Dial connects to the cluster and the MQTT listeners (none when
// o.MQTT is empty), and creates the streams (pings, history,
// checkpoints) and the lease and retained buckets if they are missing.
func Dial(o Options) (*Conn, error) {
	c := &Conn{}
	if err := c.dial(&o); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) dial(o *Options) error {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	sec := &o.Security
	tc, err := sec.TLSConfig()
	if err != nil {
		return &SettingsError{err}
	}
	// Read whether or not there is an MQTT side: an unreadable creds
	// file is a settings error before anything is dialled.
	mqUser, mqPass, err := sec.MQTTLogin(o.Name)
	if err != nil {
		return &SettingsError{err}
	}
	// No reconnect buffer: a write made while the connection is down
	// fails at once, and is tried again while its lease holds. Buffered,
	// a partition's history record would go out once the connection is
	// back, after the partition had stopped for its lease and another
	// owner had read the stream for what it may have left.
	natsOpts := append(sec.NATSOptions(tc), LogEvents(o.Log.With("nats", "worker"))...)
	c.NATS, err = nats.Connect(o.NATS, append(natsOpts, nats.Name("edgefence-worker "+o.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(false), nats.ReconnectBufSize(-1))...)
	if err != nil {
		return fmt.Errorf("connect to NATS %s: %w", security.RedactURLs(o.NATS), sec.Explain(err))
	}
	if c.JS, err = jetstream.New(c.NATS); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	// Several workers starting at once create the same streams: retry
	// each step on its own deadline until the cluster agrees.
	if err := retry(o.Log, "ping stream", func(ctx context.Context) error {
		_, err := PingStream(ctx, c.JS, o.Replicas, o.PingsMaxAge)
		return err
	}); err != nil {
		return err
	}
	if err := retry(o.Log, "history stream", func(ctx context.Context) (err error) {
		c.History, err = c.ensureStream(ctx, jetstream.StreamConfig{
			Name: subjects.HistoryStream, Subjects: []string{subjects.HistoryPrefix + ">"}, Replicas: o.Replicas,
			Storage: jetstream.FileStorage, Duplicates: o.DedupWindow, MaxAge: o.PingsMaxAge,
		})
		return err
	}); err != nil {
		return err
	}
	if err := retry(o.Log, "lease bucket", func(ctx context.Context) (err error) {
		c.Leases, err = c.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: subjects.LeaseBucket, TTL: o.Lease, Replicas: o.Replicas, Storage: jetstream.FileStorage, History: 1,
		})
		return err
	}); err != nil {
		return err
	}
	if err := retry(o.Log, "checkpoint stream", func(ctx context.Context) (err error) {
		c.Checkpoints, err = c.ensureStream(ctx, o.CheckpointStream)
		return err
	}); err != nil {
		return err
	}
	if err := retry(o.Log, "retained bucket", func(ctx context.Context) (err error) {
		c.Retained, err = RetainedBucket(ctx, c.JS, o.Replicas)
		return err
	}); err != nil {
		return err
	}
	if strings.TrimSpace(o.MQTT) == "" {
		return nil // no NATS MQTT side: dashboards connect to serve --cluster nodes
	}
	opts := mqtt.NewClientOptions().SetClientID("edgefence-worker-" + o.Name).SetCleanSession(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(time.Second).
		SetConnectTimeout(5 * time.Second).SetOrderMatters(false)
	for _, a := range strings.Split(o.MQTT, ",") {
		if a = strings.TrimSpace(a); a != "" {
			opts.AddBroker(security.MQTTBroker(a, tc != nil))
		}
	}
	if tc != nil {
		opts.SetTLSConfig(tc)
	}
	if mqUser != "" || mqPass != "" {
		opts.SetUsername(mqUser).SetPassword(mqPass)
	}
	c.mq = mqtt.NewClient(opts)
	// Retried here rather than by paho (ConnectRetry), so that a refused
	// login or a TLS failure ends the start at once with its cause; a
	// listener not up yet is tried again for 30 s. Once connected, paho
	// reconnects by itself.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		tok := c.mq.Connect() // one ConnectTimeout per listener
		if tok.WaitTimeout(time.Minute) && tok.Error() == nil {
			return c.connectMQTTPool(opts, o)
		}
		err = tokErr(tok)
		if security.Permanent(err) || time.Now().After(deadline) {
			return fmt.Errorf("connect to MQTT %s: %w", security.RedactURLs(o.MQTT), sec.Explain(err))
		}
	}
}

// mqttConns is how many MQTT connections a worker publishes over, at
// most one per partition. NATS stores the retained publishes of one
// connection one at a time, each a replicated store: partitions on one
// connection would wait for each other. They are made at start, so that
// taking a partition over waits for none.
const mqttConns = 16

// connectMQTTPool makes the connections besides c.mq that partitions
// publish over.
func (c *Conn) connectMQTTPool(opts *mqtt.ClientOptions, o *Options) error {
	c.mqs = []mqtt.Client{c.mq}
	toks := make([]mqtt.Token, 0, mqttConns)
	for i := 1; i < min(o.Partitions, mqttConns); i++ {
		oo := *opts
		oo.SetClientID(oo.ClientID + "-" + strconv.Itoa(i))
		mc := mqtt.NewClient(&oo)
		c.mqs = append(c.mqs, mc)
		toks = append(toks, mc.Connect())
	}
	for _, tok := range toks {
		if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
			return fmt.Errorf("connect to MQTT %s: %w", security.RedactURLs(o.MQTT), tokErr(tok))
		}
	}
	return nil
}

// MQTT returns partition n's MQTT connection: one device's messages
// all go over one. It is nil when the worker has no MQTT listeners.
func (c *Conn) MQTT(n int) mqtt.Client {
	if len(c.mqs) == 0 {
		return nil
	}
	return c.mqs[n%len(c.mqs)]
}

// Close closes the connections.
func (c *Conn) Close() {
	for _, mc := range c.mqs[min(1, len(c.mqs)):] {
		mc.Disconnect(250)
	}
	if c.mq != nil {
		c.mq.Disconnect(250)
	}
	if c.NATS != nil {
		c.NATS.Close()
	}
}

func tokErr(t mqtt.Token) error {
	if err := t.Error(); err != nil {
		return err
	}
	return errors.New("no CONNACK in time")
}

// PingStream returns the ping stream, creating it with replicas and
// maxAge when it is missing: the workers and serve --cluster, whichever
// starts first, make the same.
func PingStream(ctx context.Context, js jetstream.JetStream, replicas int, maxAge time.Duration) (jetstream.Stream, error) {
	// AllowDirect: the workers' watchdog counts each partition's
	// messages with direct gets, which any replica answers.
	s, err := ensureStream(ctx, js, jetstream.StreamConfig{
		Name: subjects.PingStream, Subjects: []string{subjects.PingSubjectPrefix + ">"}, Replicas: replicas,
		Storage: jetstream.FileStorage, MaxAge: maxAge, AllowDirect: true,
	})
	if err == nil && !s.CachedInfo().Config.AllowDirect { // made by an earlier worker
		cfg := s.CachedInfo().Config
		cfg.AllowDirect = true
		_, err = js.UpdateStream(ctx, cfg)
	}
	return s, err
}

func (c *Conn) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	return ensureStream(ctx, c.JS, cfg)
}

// ensureStream returns the stream, creating it if it does not exist. An
// existing stream is left as it is (an operator may have tuned it), and
// workers starting together do not all propose the same update.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return js.Stream(ctx, cfg.Name)
		}
	}
	return s, err
}

// retry runs step with a 5 s deadline until it succeeds, for a minute.
func retry(log *slog.Logger, what string, step func(context.Context) error) error {
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = step(ctx)
		cancel()
		if err == nil {
			return nil
		}
		log.Warn("cluster set-up step failed, retrying", "step", what, "error", err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// readTry bounds one read of a stream in LastMsg.
const readTry = 2 * time.Second

// LastMsg is s.GetLastMsgForSubject, tried until ctx ends while the
// cluster does not answer it (Unanswered), a new read every HedgeEvery
// while the earlier ones wait (Hedged). A read sent through a server
// that does not yet know where the stream's leader is (right after
// another node created the stream, or while the stream elects one after
// its leader's death) goes unanswered, or is answered 503 at once: serve
// --cluster nodes started together had their partitions fail to start
// after 30 s, a partition taken over during an election stopped and
// started again, and a resumed partition's read of its last record,
// sent during the history stream's election, held it 2 s after the
// stream was back (docs/scale-out.md). A read sent again reaches the
// leader.
func LastMsg(ctx context.Context, s jetstream.Stream, subject string) (*jetstream.RawStreamMsg, error) {
	type answer struct {
		m   *jetstream.RawStreamMsg
		err error // an answer too: ErrMsgNotFound, say
	}
	a, err := Hedged(ctx, HedgeEvery, func(c context.Context) (answer, error) {
		try, cancel := context.WithTimeout(c, readTry)
		defer cancel()
		m, err := s.GetLastMsgForSubject(try, subject)
		if err != nil && Unanswered(err) {
			return answer{}, err
		}
		return answer{m, err}, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return a.m, a.err
}

// Unanswered reports whether err says the cluster did not answer (no
// leader to answer yet, or JetStream telling it is unavailable for now)
// rather than refused the request.
func Unanswered(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.As(err, &api) && api.Code == 503
}
