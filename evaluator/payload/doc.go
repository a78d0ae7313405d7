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
// Input must be strict JSON (RFC 8259), exactly what encoding/json.Valid
// accepts, with arrays and objects nested at most 300 deep: NaN literals,
// malformed numbers, bad escapes and the like are NotJSON rather than
// guessed at. Decoding allocates nothing, rejections included.
package payload
