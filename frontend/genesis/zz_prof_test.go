package genesis

import (
	"os"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/ir"
)

func TestZZProf(t *testing.T) {
	name := os.Getenv("PROF_FILE")
	if name == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(name)
	t0 := time.Now()
	f, ds := Parse(name, src)
	t.Logf("parse %v %d diags", time.Since(t0), len(ds))
	if ds.HasErrors() {
		t.Log(ds.Error())
		return
	}
	t0 = time.Now()
	p, ds := Check([]*File{f})
	t.Logf("check %v %d %v", time.Since(t0), len(ds), ds)
	if ds.HasErrors() {
		t.Log(ds.Error())
		return
	}
	t0 = time.Now()
	m, ds := Lower(p)
	t.Logf("lower %v %d", time.Since(t0), len(ds))
	t0 = time.Now()
	ds = ir.Verify(m)
	t.Logf("verify %v %d", time.Since(t0), len(ds))
}
