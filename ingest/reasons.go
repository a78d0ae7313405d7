package ingest

import (
	"strconv"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// reason is a payload.Reason or one of the ingest path's own.
type reason uint8

// The ingest path's own reasons, past the payload's.
var (
	reasonDeviceID       = reason(payload.NumReasons)
	reasonDeviceMismatch = reason(payload.NumReasons + 1)
)

const numReasons = 32

func reasonOf(r payload.Reason) reason { return reason(r) }

func (r reason) String() string {
	switch r {
	case reasonDeviceID:
		return "device_id"
	case reasonDeviceMismatch:
		return "device_mismatch"
	}
	return payload.Reason(r).String()
}

func (r reason) Error() string {
	switch r {
	case reasonDeviceID:
		return "telemetry topic: " + ErrDeviceID.Error()
	case reasonDeviceMismatch:
		return "telemetry: " + ErrDeviceMismatch.Error()
	}
	return payload.Reason(r).Error()
}

// message is the reject message: Error, naming the field a wrong_type is
// about when the decoder said which.
func (r reason) message(field string) string {
	if field == "" || r != reasonOf(payload.WrongType) {
		return r.Error()
	}
	return "payload: field " + strconv.Quote(field) + " has the wrong JSON type"
}
