package store

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
	"pgregory.net/rapid"
)

// appendMessage writes what json.Marshal writes, for any message: what
// the store holds stays what mochi's bbolt hook wrote and reads.
func TestAppendMessageIsJSON(t *testing.T) {
	str := rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[a-z0-9/_+#-]{1,20}`), rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune("a/&<>\"\\\n\t\x7f\u00e9\u2028\u2029\ufffd"))), // what JSON escapes
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))     // invalid UTF-8 too
	byts := rapid.OneOf(rapid.Just([]byte(nil)), rapid.Just([]byte{}), rapid.SliceOf(rapid.Byte()))
	rapid.Check(t, func(t *rapid.T) {
		m := storage.Message{
			Properties: storage.MessageProperties{
				CorrelationData:       byts.Draw(t, "correlation"),
				ContentType:           str.Draw(t, "contentType"),
				ResponseTopic:         str.Draw(t, "responseTopic"),
				MessageExpiryInterval: rapid.OneOf(rapid.Just[uint32](0), rapid.Uint32()).Draw(t, "expiry"),
				TopicAlias:            rapid.Uint16().Draw(t, "alias"),
				PayloadFormat:         rapid.Byte().Draw(t, "format"),
				PayloadFormatFlag:     rapid.Bool().Draw(t, "formatFlag"),
			},
			Payload:   byts.Draw(t, "payload"),
			T:         str.Draw(t, "t"),
			ID:        str.Draw(t, "id"),
			Client:    str.Draw(t, "client"),
			Origin:    str.Draw(t, "origin"),
			TopicName: str.Draw(t, "topic"),
			FixedHeader: packets.FixedHeader{
				Remaining: rapid.Int().Draw(t, "remaining"),
				Type:      rapid.Byte().Draw(t, "type"),
				Qos:       rapid.Byte().Draw(t, "qos"),
				Dup:       rapid.Bool().Draw(t, "dup"),
				Retain:    rapid.Bool().Draw(t, "retain"),
			},
			Created:  rapid.OneOf(rapid.Just[int64](0), rapid.Int64()).Draw(t, "created"),
			Sent:     rapid.OneOf(rapid.Just[int64](0), rapid.Int64()).Draw(t, "sent"),
			PacketID: rapid.Uint16().Draw(t, "packetID"),
		}
		if rapid.Bool().Draw(t, "subscriptionIDs") {
			m.Properties.SubscriptionIdentifier = rapid.SliceOf(rapid.Int()).Draw(t, "ids")
		}
		for range rapid.IntRange(0, 3).Draw(t, "users") {
			m.Properties.User = append(m.Properties.User, packets.UserProperty{Key: str.Draw(t, "k"), Val: str.Draw(t, "v")})
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendMessage(nil, &m); !bytes.Equal(got, want) {
			t.Fatalf("appendMessage\n\t%s\njson.Marshal\n\t%s", got, want)
		}
	})
}
