// Package payload decodes the JSON bodies GPS trackers publish into a
// Position.
//
// It is a pure stage: bytes and a Format in, a Position or a Reason out,
// with no clock, no configuration beyond a size limit and no I/O. Policy
// that needs context (stamp plausibility, dedup, fence evaluation) belongs
// to later stages, so the decoder keeps the device's values as sent,
// including implausible stamps, and rejects only what cannot be a
// position at all.
//
// Input must be strict JSON (RFC 8259): leniencies of the underlying
// parser, such as NaN literals or malformed numbers, are rejected as
// NotJSON rather than guessed at.
package payload
