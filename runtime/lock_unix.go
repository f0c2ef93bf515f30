//go:build unix

package runtime

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) lock of f without waiting: the
// lock belongs to the open file, so a second opening of the same journal
// is refused even in the same process, and the system releases it when
// the file is closed or the process ends, a SIGKILL included — a crashed
// run never leaves a stale lock behind.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errJournalLocked
		}
		return errors.New("locking the journal: " + err.Error())
	}
}
