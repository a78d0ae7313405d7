package bridge

// ReloadFences reads the fence file again and swaps it in (SIGHUP), as
// serve does: an invalid file is rejected whole, logged and counted, and
// the previous fences stay live; devices inside a removed fence get their
// EXIT now.
func (b *Bridge) ReloadFences() error { return b.fences.Reload() }
