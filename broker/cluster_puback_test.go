package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/internal/mqtttest"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestClusterPUBACKsInOrderWhilePipelined: a gateway that sends a window
// of QoS 1 pings without waiting (MQTT 3.1.1) gets their PUBACKs in the
// order it sent them ([MQTT-4.6.0-2]), though each waits for the ping
// stream and mochi answers a bad payload at once; a ping the stream
// refuses gets none; every acknowledged ping is in the stream, once.
func TestClusterPUBACKsInOrderWhilePipelined(t *testing.T) {
	n := startNATSNode(t)
	srv := start(t, clusterConfig(t, n, 4))
	gw := dialRaw(t, srv.MQTTAddr(), 4)
	gw.mustConnect(mqtttest.ID("gateway"), anonymous)
	ts0 := time.Now().Add(-time.Hour).UnixMilli()
	const sent = 600
	var buf []byte
	var want []uint16
	stored, refused := 0, 0
	for i := range sent {
		id := uint16(i + 1)
		topic, body := fmt.Sprintf("devices/dev-%d/telemetry", i%10), canonical(museumLat, museumLon, ts0+int64(i)*1000)
		switch {
		case i%97 == 50:
			body = []byte("not json") // refused by the reader: mochi's PUBACK
		case i%89 == 70:
			topic = "devices/bad*dev/telemetry" // no ping stream subject: no PUBACK
			refused++
		default:
			stored++
		}
		buf = append(buf, gw.encode(publishPacket(1, id, topic, body))...)
		if topic != "devices/bad*dev/telemetry" {
			want = append(want, id)
		}
	}
	if err := gw.write(buf); err != nil {
		t.Fatal(err)
	}
	got := make([]uint16, 0, len(want))
	for len(got) < len(want) {
		got = append(got, gw.expect(packets.Puback, fmt.Sprintf("PUBACK %d of %d", len(got)+1, len(want))).PacketID)
	}
	gw.ping("after the PUBACKs: none for the refused pings")
	if !slices.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("PUBACKs out of order from the %dth: got %v, want %v", i+1, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
	}
	if n := len(readPingStream(t, n.url())); n != stored {
		t.Errorf("%d pings in the stream, %d acknowledged", n, stored)
	}
	if f := metric(t, srv, `edgefence_cluster_pings_total{result="bad_subject"}`); f != float64(refused) {
		t.Errorf("%v pings refused for their subject, want %d", f, refused)
	}
}

// TestClusterPUBACKRefusedWhenTheStreamDoesNotAnswer: a ping JetStream
// does not take after the hook has returned (the ping stream deleted
// under a running node: NATS answers that no one listens) is refused
// when that answer comes, as when the hook waited: PUBACK 0x97 to an MQTT
// 5 tracker, none to a 3.1.1 one, whose connection stays up; counted.
func TestClusterPUBACKRefusedWhenTheStreamDoesNotAnswer(t *testing.T) {
	n := startNATSNode(t)
	srv := start(t, clusterConfig(t, n, 2))
	tr := connect5(t, srv.MQTTAddr(), "tracker")
	ts0 := time.Now().Add(-time.Hour).UnixMilli()
	tr.ping("dev-1", museumLat, museumLon, ts0)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := jetStream(t, n.url()).DeleteStream(ctx, subjects.PingStream); err != nil {
		t.Fatal(err)
	}
	if rc := tr.Publish("devices/dev-1/telemetry", 1, canonical(museumLat, museumLon, ts0+1000)); rc != 0x97 {
		t.Errorf("MQTT 5 ping with no stream: PUBACK %#x, want 0x97", rc)
	}
	old := dialRaw(t, srv.MQTTAddr(), 4)
	old.mustConnect(mqtttest.ID("tracker-311"), anonymous)
	if err := old.publish(1, 1, "devices/dev-2/telemetry", canonical(museumLat, museumLon, ts0)); err != nil {
		t.Fatal(err)
	}
	// Past the refusal (nats.go tries twice more, 250 ms apart): still no
	// PUBACK, and the connection answers.
	waitMetric(t, srv, `edgefence_cluster_pings_total{result="failed"}`, 2)
	old.ping("3.1.1 ping refused by the stream: no PUBACK before the PINGRESP")
}
