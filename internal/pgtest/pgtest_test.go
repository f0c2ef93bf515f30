package pgtest

import (
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestStart starts a cluster, checks it accepts connections, and that
// nothing is left once the test's cleanups ran.
func TestStart(t *testing.T) {
	var dir string
	t.Run("cluster", func(t *testing.T) {
		s := Start(t)
		dir = s.Dir
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.Port), 10*time.Second)
		if err != nil {
			t.Fatalf("the cluster does not accept connections: %v", err)
		}
		c.Close()
	})
	if dir == "" {
		return // skipped
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory %s is left behind (%v)", dir, err)
	}
}
