package ops

import (
	"net"
	"net/http"
	"strings"
)

// CheckHost wraps a handler served without credentials so that it
// answers only requests addressed to this machine: a Host that is an IP
// address, localhost, or listenAddr's own host name. A web page cannot
// then read it by rebinding its own DNS name to 127.0.0.1 (DNS
// rebinding): the browser would send that name as the Host, and it gets
// 421. An IP address as the Host means the page's origin is that address,
// so it is this server's own page.
func CheckHost(listenAddr string, next http.Handler) http.Handler {
	own, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		own = listenAddr
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !localHost(r.Host, own) {
			http.Error(w, "edgefence: Host "+r.Host+" is not this server's name; open the page by its address, "+
				"localhost or 127.0.0.1 (a name that points here is refused against DNS rebinding without --auth)",
				http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localHost reports whether hostport (a Host header) names this server:
// an IP address, localhost, or own (the listen address's host).
func localHost(hostport, own string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	return own != "" && net.ParseIP(own) == nil && strings.EqualFold(host, own)
}
