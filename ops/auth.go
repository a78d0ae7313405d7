package ops

import (
	"net/http"

	"github.com/edgefence/edgefence/auth"
)

// Login checks a username and password (within the broker's login bounds,
// as an MQTT login) and returns the user, or nil.
type Login func(name string, password []byte, remote string) *auth.User

// adminOnly wraps a handler so that it needs an admin user's HTTP Basic
// credentials: 401 asks for them, 403 refuses another role. With no login
// (no --auth) it returns the handler as it is.
func adminOnly(login Login) func(http.Handler) http.Handler {
	if login == nil {
		return func(h http.Handler) http.Handler { return h }
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name, password, ok := r.BasicAuth()
			var u *auth.User
			if ok {
				u = login(name, []byte(password), r.RemoteAddr)
			}
			switch {
			case u == nil:
				w.Header().Set("WWW-Authenticate", `Basic realm="edgefence metrics", charset="UTF-8"`)
				http.Error(w, "with --auth, /metrics and /debug/pprof/ need an admin user (HTTP Basic)", http.StatusUnauthorized)
			case u.Role != auth.RoleAdmin:
				http.Error(w, "/metrics and /debug/pprof/ need an admin user", http.StatusForbidden)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}
