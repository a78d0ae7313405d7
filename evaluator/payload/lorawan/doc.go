// Package lorawan decodes the uplinks LoRaWAN network servers publish on
// their MQTT integrations — ChirpStack v4 (application/<app>/device/<devEUI>/event/up),
// ChirpStack v3 (the same topic, or .../rx) and The Things Stack v3
// (v3/<app>@<tenant>/devices/<device>/up) — into
// a payload.Position, with the device id, the frame counter and the clock
// the event time was read from.
//
// The position is in the codec's decoded object, where codecs put it in
// different places: the common layouts are recognised and a Mapping
// names the rest. The event time is the best clock the uplink carries: a
// device stamp in the decoded object, else the earliest GPS-disciplined
// gateway receive time, else the network server's receive time.
//
// Like package payload it is a pure stage, bytes in and a result out,
// with the same strict JSON; it allocates nothing for the documented
// shapes (a time with a numeric zone offset costs one).
package lorawan
