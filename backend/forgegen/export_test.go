package forgegen

// SetIndexLoops turns the indexing of loops' stepped pointers (planLoop)
// on or off, for the tests that compare both, and returns the setting
// to restore.
func SetIndexLoops(on bool) (was bool) {
	was, indexLoops = indexLoops, on
	return was
}
