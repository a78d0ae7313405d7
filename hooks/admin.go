package hooks

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// AdminFencesTopic is where an admin publishes a GeoJSON FeatureCollection
// to replace the live fences.
const AdminFencesTopic = "edgefence/admin/fences"

// Admin applies fence sets published on AdminFencesTopic. Who may publish
// there is the Access hook's decision (admins, or anyone local when
// anonymous); this hook only applies what got through.
type Admin struct {
	mqtt.HookBase
	apply func(geojson []byte, source string) error
}

// NewAdmin returns the hook; apply swaps the fences or says why not.
func NewAdmin(apply func(geojson []byte, source string) error) *Admin {
	return &Admin{apply: apply}
}

// ID names the hook.
func (h *Admin) ID() string { return "edgefence-admin" }

// Provides says which hook events the hook handles.
func (h *Admin) Provides(b byte) bool { return b == mqtt.OnPublish }

// OnPublishInPlace applies a fence set. It is never routed or retained: an
// invalid set gets 0x99 (MQTT 5 QoS 1) and the previous fences stay live.
func (h *Admin) OnPublishInPlace(cl *mqtt.Client, pk *packets.Packet) error {
	if pk.TopicName != AdminFencesTopic {
		return nil
	}
	if err := h.apply(pk.Payload, "mqtt:"+cl.ID); err != nil {
		if pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5 {
			return packets.ErrPayloadFormatInvalid
		}
	}
	return packets.CodeSuccessIgnore
}

// OnPublish is OnPublishInPlace on a copy, for mochi's Hook interface;
// mochi calls OnPublishInPlace, which keeps the packet off the reader's
// stack (mochi patch 0024).
func (h *Admin) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	err := h.OnPublishInPlace(cl, &pk)
	return pk, err
}
