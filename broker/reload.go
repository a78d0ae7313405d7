package broker

// ReloadFences reads the fences file again and swaps it in (SIGHUP).
func (s *Server) ReloadFences() error { return s.fences.Reload() }

// ApplyFences parses a GeoJSON fence set and swaps it in atomically (the
// admin topic). An invalid set is rejected whole, logged and counted, and
// the previous fences stay live. Devices inside a removed fence get their
// EXIT now. Reloads are serialised, so sources racing each other apply in
// turn.
func (s *Server) ApplyFences(geojson []byte, source string) error {
	return s.fences.Apply(geojson, source)
}
