package runtime

import (
	"strconv"
	"sync/atomic"
)

// Site is the static part of a step's identity: the step's name and its
// source position. Generated code declares one Site per effect (and per
// non-effect step it reports), once per process:
//
//	var siteClassify = runtime.NewSite("classify", "refund.json", 3, 5)
//
// and passes siteClassify.At() (or siteClassify.At(i, j) inside source
// loops) to the effect.
type Site struct {
	Name      string
	File      string
	Line, Col int
	id        string                     // "name @ file:line:col", or "name" without a position
	cache     [16]atomic.Pointer[string] // identities with one counter 0..15
}

// NewSite returns the site of the step name at file:line:col.
func NewSite(name, file string, line, col int) *Site {
	s := &Site{Name: name, File: file, Line: line, Col: col}
	s.id = s.format()
	return s
}

func (s *Site) format() string {
	if s.File == "" && s.Line == 0 && s.Col == 0 {
		return s.Name
	}
	return s.Name + " @ " + s.File + ":" + strconv.Itoa(s.Line) + ":" + strconv.Itoa(s.Col)
}

// idWith returns the identity of the site's step with counters iters,
// from a cache for one small counter (the common case: a step graph's
// visit count), so that counting steps allocates nothing.
func (s *Site) idWith(iters []int64) string {
	if len(iters) == 0 {
		return s.ID()
	}
	if len(iters) == 1 && iters[0] >= 0 && iters[0] < int64(len(s.cache)) {
		if p := s.cache[iters[0]].Load(); p != nil {
			return *p
		}
		id := string(Step{Site: s, Iters: iters}.appendID(nil))
		s.cache[iters[0]].Store(&id)
		return id
	}
	return string(Step{Site: s, Iters: iters}.appendID(nil))
}

// ID returns the site's identity: "name @ file:line:col".
func (s *Site) ID() string {
	if s.id == "" {
		return s.format()
	}
	return s.id
}

// At returns the step of this site with the given iteration counters
// (those of the enclosing source loops, outermost first).
func (s *Site) At(iters ...int64) Step { return Step{Site: s, Iters: iters} }

// Step identifies one execution of a step: its site and the iteration
// counters of the enclosing source loops. The runtime keys traces,
// journals and replays on its identity (docs/ir.md "Step identity"):
//
//	[call path > ]name @ file:line:col[ # i,j][~n]
//
// where the call path lists the call sites (Run.Enter) and parallel
// branches (Run.Parallel) the step runs in, and ~n counts the earlier
// steps of the same identity in the run (a step graph cycle runs one step
// again with the same counters).
type Step struct {
	Site  *Site
	Iters []int64
}

var anonymous = NewSite("?", "", 0, 0)

func (st Step) site() *Site {
	if st.Site == nil {
		return anonymous
	}
	return st.Site
}

// Name returns the step's name.
func (st Step) Name() string { return st.site().Name }

// ID returns the step's identity without call path and occurrence.
func (st Step) ID() string {
	if len(st.Iters) == 0 {
		return st.site().ID()
	}
	return string(st.appendID(nil))
}

func (st Step) appendID(b []byte) []byte {
	b = append(b, st.site().ID()...)
	for i, n := range st.Iters {
		if i == 0 {
			b = append(b, " # "...)
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return b
}
