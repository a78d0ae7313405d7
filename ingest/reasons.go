package ingest

import "github.com/edgefence/edgefence/evaluator/payload"

// reason is a payload.Reason or one of the ingest path's own.
type reason uint8

var reasonDeviceID = reason(payload.NumReasons)

const numReasons = 32

func reasonOf(r payload.Reason) reason { return reason(r) }

func (r reason) String() string {
	if r == reasonDeviceID {
		return "device_id"
	}
	return payload.Reason(r).String()
}

func (r reason) Error() string {
	if r == reasonDeviceID {
		return "telemetry topic: " + ErrDeviceID.Error()
	}
	return payload.Reason(r).Error()
}
