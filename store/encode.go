package store

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
)

// appendMessage appends m as encoding/json encodes it (storage.Message's
// MarshalBinary), byte for byte, without reflection: json.Marshal was
// the largest part of storing a transition (docs/persistence.md).
// TestAppendMessageIsJSON holds it to json.Marshal.
func appendMessage(b []byte, m *storage.Message) []byte {
	p := &m.Properties
	b = append(b, `{"properties":{`...)
	n := len(b)
	if len(p.CorrelationData) > 0 {
		b = appendBytes(append(b, `"correlationData":`...), p.CorrelationData)
	}
	if len(p.SubscriptionIdentifier) > 0 {
		b = append(comma(b, n), `"subscriptionIdentifier":[`...)
		for i, id := range p.SubscriptionIdentifier {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, ']')
	}
	if len(p.User) > 0 {
		b = append(comma(b, n), `"user":[`...)
		for i, u := range p.User {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(append(b, `{"k":`...), u.Key)
			b = append(appendString(append(b, `,"v":`...), u.Val), '}')
		}
		b = append(b, ']')
	}
	b = appendStringField(b, n, `"contentType":`, p.ContentType)
	b = appendStringField(b, n, `"responseTopic":`, p.ResponseTopic)
	b = appendUintField(b, n, `"messageExpiry":`, uint64(p.MessageExpiryInterval))
	b = appendUintField(b, n, `"topicAlias":`, uint64(p.TopicAlias))
	b = appendUintField(b, n, `"payloadFormat":`, uint64(p.PayloadFormat))
	if p.PayloadFormatFlag {
		b = append(comma(b, n), `"payloadFormatFlag":true`...)
	}
	b = appendBytes(append(b, `},"payload":`...), m.Payload)
	n = 0 // every field from here on follows another
	b = appendStringField(b, n, `"t":`, m.T)
	b = appendStringField(b, n, `"id":`, m.ID)
	b = appendStringField(b, n, `"client":`, m.Client)
	b = appendStringField(b, n, `"origin":`, m.Origin)
	b = appendStringField(b, n, `"topic_name":`, m.TopicName)
	h := &m.FixedHeader
	b = strconv.AppendInt(append(b, `,"fixedheader":{"remaining":`...), int64(h.Remaining), 10)
	b = strconv.AppendUint(append(b, `,"type":`...), uint64(h.Type), 10)
	b = strconv.AppendUint(append(b, `,"qos":`...), uint64(h.Qos), 10)
	b = strconv.AppendBool(append(b, `,"dup":`...), h.Dup)
	b = append(strconv.AppendBool(append(b, `,"retain":`...), h.Retain), '}')
	if m.Created != 0 {
		b = strconv.AppendInt(append(b, `,"created":`...), m.Created, 10)
	}
	if m.Sent != 0 {
		b = strconv.AppendInt(append(b, `,"sent":`...), m.Sent, 10)
	}
	b = appendUintField(b, n, `"packet_id":`, uint64(m.PacketID))
	return append(b, '}')
}

// comma separates a field from the one before it, unless it is the
// first after the brace at n (n 0: there is always one before).
func comma(b []byte, n int) []byte {
	if len(b) == n {
		return b
	}
	return append(b, ',')
}

// appendStringField appends an omitempty string field.
func appendStringField(b []byte, n int, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(comma(b, n), name...), v)
}

// appendUintField appends an omitempty number field.
func appendUintField(b []byte, n int, name string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendUint(append(comma(b, n), name...), v, 10)
}

// appendBytes appends v as encoding/json does a []byte: base64, or null.
func appendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// appendString appends s as a JSON string. Printable ASCII that
// encoding/json leaves as it is (topics, client ids, content types) is
// copied; anything else is left to encoding/json, whose escaping
// (HTML characters, invalid UTF-8, U+2028) is its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
