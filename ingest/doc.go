// Package ingest is the transport-neutral ingest path: what serve's
// telemetry hook, the bridge and a scale-out worker share between a
// tracker's publish and the engine.
//
// A publish (topic and body, from whichever transport) goes to a Reader:
// the topic is matched against the telemetry filters (TelemetryFilter:
// which topics carry telemetry, in which format, and which levels name
// the device), the body is decoded and validated (package payload, and
// package lorawan for network servers' uplinks, one ping per LoRaWAN
// frame however many gateways heard it), and what is refused is counted,
// reported on the reject topic (Rejects) and logged, rate-limited. An
// accepted position is then submitted (Reader.Submit) to the sharded
// engine, which clamps its stamp and evaluates it; a refusal (a full
// shard queue) is mapped to what the publisher can be told (Refusal). A
// scale-out worker only reads (Reader.ReadAt, on its stream's clock) and
// hands the position to its partition's engine itself.
package ingest
