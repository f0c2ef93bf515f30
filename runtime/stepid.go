package runtime

import (
	"strconv"
	"sync/atomic"
)

// Step identity: the static part (Site, declared by generated code), one
// execution of it (Step), and the counting that makes a Step's identity
// unique in a run (Run.identity). Traces, journals, replays and
// idempotency keys all key on it.

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
// where the call path lists the parallel branches (Run.Parallel) the
// step runs in ("BLOCK/i > " each), and ~n counts the earlier
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

// How a run counts the executions of its steps, cheapest first:
//
//   - a step without counters or call path: per site, in a short list
//     (siteCounts), then in a map by site (siteCountMap);
//   - a step with one or two counters, outside branches, in a run
//     without featureState: in a short list (iterCounts), while it holds
//     fewer than maxIterCounts entries;
//   - any other: by identity string (idCounts), which the short list's
//     entries move to when it overflows.

// siteCount counts the executions of a site.
type siteCount struct {
	s *Site
	n int
}

// iterCount counts the executions of a step with one or two counters.
type iterCount struct {
	s     *Site
	iters [2]int64
	k     int // how many counters
	n     int
}

// maxIterCounts bounds the linear list of iterCounts; longer runs count
// in idCounts.
const maxIterCounts = 32

// identity returns the identity of a step about to run, counting it.
func (r *Run) identity(st Step) string {
	s := st.site()
	if len(st.Iters) == 0 && r.path == "" {
		n := r.countSite(s)
		if n == 0 {
			return s.ID()
		}
		return s.ID() + "~" + strconv.Itoa(n)
	}
	if k := len(st.Iters); k <= 2 && r.path == "" && r.featureState == nil {
		// Most steps of a small run: count them in a short list, and
		// take the identity from the site's cache, allocating nothing.
		var key [2]int64
		copy(key[:], st.Iters)
		for i := range r.iterCounts {
			c := &r.iterCounts[i]
			if c.s == s && c.k == k && c.iters == key {
				n := c.n
				c.n++
				return s.idWith(st.Iters) + "~" + strconv.Itoa(n)
			}
		}
		if len(r.iterCounts) < maxIterCounts {
			if r.iterCounts == nil {
				r.iterCounts = r.iterCountBuf[:0]
			}
			r.iterCounts = append(r.iterCounts, iterCount{s: s, iters: key, k: k, n: 1})
			return s.idWith(st.Iters)
		}
	}
	x := r.features()
	if len(r.iterCounts) > 0 {
		// Move the short list's counts to the map.
		if r.idCounts == nil {
			r.idCounts = make(map[string]int)
		}
		for _, c := range r.iterCounts {
			r.idCounts[c.s.idWith(c.iters[:c.k])] = c.n
		}
		r.iterCounts = r.iterCounts[:0]
	}
	b := append(x.idbuf[:0], r.path...)
	b = st.appendID(b)
	x.idbuf = b
	if r.idCounts == nil {
		r.idCounts = make(map[string]int)
	}
	n := r.idCounts[string(b)]
	id := string(b)
	r.idCounts[id] = n + 1
	if n == 0 {
		return id
	}
	return id + "~" + strconv.Itoa(n)
}

// countSite counts an execution of a site without counters or path and
// returns the count before it.
func (r *Run) countSite(s *Site) int {
	if r.featureState != nil && r.siteCountMap != nil {
		n := r.siteCountMap[s]
		r.siteCountMap[s] = n + 1
		return n
	}
	for i := range r.siteCounts {
		if r.siteCounts[i].s == s {
			n := r.siteCounts[i].n
			r.siteCounts[i].n++
			return n
		}
	}
	if len(r.siteCounts) < 16 {
		r.siteCounts = append(r.siteCounts, siteCount{s, 1})
		return 0
	}
	r.features().siteCountMap = make(map[*Site]int, 32)
	for _, sc := range r.siteCounts {
		r.siteCountMap[sc.s] = sc.n
	}
	r.siteCounts = nil
	r.siteCountMap[s] = 1
	return 0
}

// lastID returns the identity of the latest execution of st (or of its
// next one, if it has not run), without counting.
func (r *Run) lastID(st Step) string {
	if st.Site == nil {
		return ""
	}
	s := st.site()
	n := 0
	var id string
	if len(st.Iters) == 0 && r.path == "" {
		id = s.ID()
		if r.featureState != nil && r.siteCountMap != nil {
			n = r.siteCountMap[s]
		} else {
			for _, sc := range r.siteCounts {
				if sc.s == s {
					n = sc.n
				}
			}
		}
	} else {
		id = r.path + st.ID()
		if r.featureState != nil {
			n = r.idCounts[id]
		}
		if k := len(st.Iters); k <= 2 && r.path == "" {
			var key [2]int64
			copy(key[:], st.Iters)
			for _, c := range r.iterCounts {
				if c.s == s && c.k == k && c.iters == key {
					n = c.n
				}
			}
		}
	}
	if n <= 1 {
		return id
	}
	return id + "~" + strconv.Itoa(n-1)
}
