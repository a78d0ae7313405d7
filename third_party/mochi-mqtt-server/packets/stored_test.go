// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package packets

import (
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// fill sets every field v holds, recursively, to a value other than its
// zero: a string "x", a number 1, true, a slice or map of one element.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	}
}

// leaves returns a packet for each field of Packet, and of the structs
// in it, with that field alone set, named by its path.
func leaves() map[string]Packet {
	out := map[string]Packet{}
	var walk func(path []int, name string, t reflect.Type)
	walk = func(path []int, name string, t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			p := append(append([]int{}, path...), i)
			if f.Type.Kind() == reflect.Struct {
				walk(p, name+f.Name+".", f.Type)
				continue
			}
			var pk Packet
			fill(reflect.ValueOf(&pk).Elem().FieldByIndex(p))
			out[name+f.Name] = pk
		}
	}
	walk(nil, "", reflect.TypeOf(Packet{}))
	return out
}

// TestPacketsKeepEachFieldOfAPacket stores packets with one field of
// Packet (or of a struct in it) set each, all of them, and none, and
// checks that every way out of Packets gives back the packet stored, also
// when it replaced another: a field added to Packet, ConnectParams or
// Properties that the stored form leaves out fails it.
func TestPacketsKeepEachFieldOfAPacket(t *testing.T) {
	var all Packet
	fill(reflect.ValueOf(&all).Elem())
	cases := leaves()
	cases["every field"], cases["no field"] = all, Packet{}
	cases["an empty payload"] = Packet{Payload: []byte{}}
	for name, pk := range cases {
		for _, before := range []Packet{{}, all, retainedPublish()} {
			s := NewPackets()
			s.Add("t", before)
			s.Add("t", pk)
			got, ok := s.Get("t")
			require.True(t, ok, name)
			require.Equal(t, pk, got, name)
			require.Equal(t, map[string]Packet{"t": pk}, s.GetAll(), name)
			s.Range(func(id string, got Packet) bool {
				require.Equal(t, pk, got, name)
				return true
			})
		}
	}
}

// TestPacketsKeepEveryTestPacket does the same for the packets of
// TPacketData, each kind and case.
func TestPacketsKeepEveryTestPacket(t *testing.T) {
	for typ, cases := range TPacketData {
		for _, c := range cases {
			if c.Packet == nil {
				continue
			}
			s := NewPackets()
			s.Add("t", *c.Packet)
			got, ok := s.Get("t")
			require.True(t, ok)
			require.Equal(t, *c.Packet, got, "%s: %s", PacketNames[typ], c.Desc)
		}
	}
}

// retainedPublish is a retained message as a broker publishing JSON keeps
// it: a topic, a payload and three properties.
func retainedPublish() Packet {
	return Packet{
		FixedHeader: FixedHeader{Type: Publish, Qos: 1, Retain: true},
		TopicName:   "geofence/depot/truck-1",
		Payload:     []byte(`{"type":"ENTER","device":"truck-1","fence":"depot"}`),
		Properties: Properties{
			ContentType:           "application/json",
			PayloadFormat:         1,
			PayloadFormatFlag:     true,
			MessageExpiryInterval: 3600,
		},
		Origin:  "publisher",
		Created: 1,
	}
}

// TestPacketsKeepARetainedPublishInHalfTheHeap measures the heap a stored
// retained publish takes, the map's share included: 919 bytes when the map
// held whole packets, about 455 in their stored form.
func TestPacketsKeepARetainedPublishInHalfTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("counts the heap")
	}
	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "geofence/depot/" + strconv.Itoa(i)
	}
	pk := retainedPublish()
	s := NewPackets()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		s.Add(id, pk)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("heap per stored retained publish: %d B (a Packet is %d B)", per, reflect.TypeOf(Packet{}).Size())
	require.Less(t, per, int64(480))
	require.Equal(t, n, s.Len())
}

func BenchmarkPacketsAdd(b *testing.B) {
	pk := retainedPublish()
	s := NewPackets()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Add("geofence/depot/truck-1", pk)
	}
}

func BenchmarkPacketsGet(b *testing.B) {
	s := NewPackets()
	s.Add("geofence/depot/truck-1", retainedPublish())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = s.Get("geofence/depot/truck-1")
	}
}
