// Package evaluator is the engine's single-owner core: a Processor owns
// the devices of one shard and turns their pings into ENTER, EXIT and
// DWELL transitions, with no locks and no MQTT.
//
// A ping comes in through Processor.Ingest, already decoded and clamped
// (engine.Ping). Its stamp is judged against its device's clock model
// (package clock) and placed on the device's timeline; it waits in the
// device's reorder buffer (package reorder) until the watermark passes it
// or it has waited the hold (package hold sets an adaptive one); it is
// then evaluated against the fences (package fence) by the per-fence state
// machine (package presence), and committed to the device's history
// (package history). A ping that arrives after what its device committed
// is gathered in a late batch and reconciled into that history, and the
// transitions it reveals are published as historic. Transitions and late
// pings go to the engine.Sink. Time moves only by explicit instants
// (Ingest, Advance, Sweep, Flush), so a Processor runs the same in real
// time (package sharded's shard goroutines) and in virtual time (the
// simulator and replay). Snapshot and restore, introspection and metrics
// are in packages snapshot, inspect and stats. docs/engine.md describes
// the decisions, docs/clock.md the clock model and late pings.
package evaluator
