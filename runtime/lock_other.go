//go:build !unix

package runtime

import "os"

// lockFile: without flock(2), journals are not locked (docs/runtime.md):
// the caller must not run two writers of one journal.
func lockFile(f *os.File) error { return nil }
