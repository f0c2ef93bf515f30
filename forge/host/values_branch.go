package host

// Branch returns the value store of a parallel branch that starts from
// s (docs/forge.md, "Parallel blocks"): the constants, the builtins and
// the memory limit of s, and none of its other values. A branch receives
// what it needs of them as arguments, which its host puts into the new
// store; its result leaves as a value, which the host puts into s. The
// bytes s holds are the new store's base: they count against the limit,
// as if the branch's values were added to them, so that a branch may
// use what s had left when the block started (each branch that much,
// whatever the others use meanwhile). The new store never changes what
// it shares with s (the constants' slots and memory): it reads s, which
// must not change while the branch runs, and any number of branches may
// be made from s and run at once, each on its own goroutine.
func (s *ValueHost) Branch() *ValueHost {
	n := 1 + s.consts
	b := &ValueHost{
		meta: s.meta, fns: s.fns, consts: s.consts, limit: s.limit,
		branch: true, base: s.bytes, bytes: s.bytes,
		vals: make([]slot, n, n+16),
	}
	copy(b.vals, s.vals[:n])
	// Reset reads initial only: the constants' slots of every store of a
	// run are the same.
	b.initial = s.initial
	b.initialBytes = b.base
	return b
}
