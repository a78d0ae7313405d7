package broker_test

import "github.com/edgefence/edgefence/broker"

// mochiServes makes mochi serve the MQTT TCP listener's clients, as it
// serves the MQTTS and WebSocket ones (the tracker path is being removed:
// issue 21's rules are mochi hooks). Once it is gone, this is a no-op and
// goes.
func mochiServes(cfg *broker.Config) { cfg.LightTrackers = false }
