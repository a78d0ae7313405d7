package auth

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// maxDeviceName bounds a device id: it is a topic level of every topic
// the device appears on and a key of the engine's per-device state.
const maxDeviceName = 128

// maxUsername is the longest MQTT string.
const maxUsername = 65535

// checkUsername checks what any MQTT username must be, as the broker will
// receive it: non-empty UTF-8 without NUL.
func checkUsername(name string) error {
	switch {
	case name == "":
		return errors.New("username is required")
	case len(name) > maxUsername:
		return errors.New("longer than an MQTT string may be (65535 bytes)")
	case !utf8.ValidString(name):
		return errors.New("not valid UTF-8")
	case strings.IndexByte(name, 0) >= 0:
		return errors.New("contains NUL")
	}
	return nil
}

// checkDeviceName checks a device's username, which is its device id and
// must therefore be a single topic level that matches only itself.
func checkDeviceName(name string) error {
	if err := checkUsername(name); err != nil {
		return err
	}
	switch {
	case len(name) > maxDeviceName:
		return errors.New("longer than 128 bytes")
	case strings.ContainsAny(name, "/+#"):
		return errors.New("contains '/', '+' or '#'")
	case name[0] == '$':
		return errors.New("starts with '$', which MQTT reserves for server topics")
	}
	return nil
}
