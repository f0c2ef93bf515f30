package format

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk of Diff shows around a
// change, as diff -u does.
const diffContext = 3

// Diff returns the unified diff (diff -u, without timestamps) that turns
// a, named oldName, into b, named newName: "" when they are equal. A
// text that does not end with a line break gets the "\ No newline at end
// of file" line of diff. It finds a shortest edit script (Myers), so its
// time grows with the size of the texts times the number of lines that
// differ.
func Diff(oldName, newName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	x, y := splitLines(string(a)), splitLines(string(b))
	ops := editScript(x, y)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	// Group the edits into hunks: runs of changes no more than
	// 2*diffContext unchanged lines apart.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*diffContext {
				break
			}
		}
		end = min(end+diffContext, len(ops))
		hunk := ops[start:end]
		ax, ay := hunk[0].x, hunk[0].y
		nx, ny := 0, 0
		for _, op := range hunk {
			if op.kind != '+' {
				nx++
			}
			if op.kind != '-' {
				ny++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(ax, nx), hunkRange(ay, ny))
		for _, op := range hunk {
			line := op.text
			sb.WriteByte(op.kind)
			sb.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

// hunkRange is the range of a hunk header: from line start (from 0) for
// n lines, as diff -u writes it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s into lines, each with its line break (the last
// one may have none).
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// An edit is one line of an edit script: kept (' '), deleted ('-') or
// inserted ('+'), with the index of the line in the old text (x) and the
// new one (y) where it stands.
type edit struct {
	kind byte
	text string
	x, y int
}

// maxEdits bounds the search of a shortest edit script: past it, the
// differing middle of the texts is written as deleted then inserted
// whole, which is a correct diff if not the shortest, and keeps the time
// and memory of the search bounded (its trace is quadratic in the edits).
const maxEdits = 2000

// editScript returns an edit script from x to y: the lines they start
// and end with in common kept, and a shortest script for the lines
// between (Myers' greedy algorithm) when it has at most maxEdits edits.
func editScript(x, y []string) []edit {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []edit
	for i := 0; i < pre; i++ {
		ops = append(ops, edit{kind: ' ', text: x[i], x: i, y: i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	mid, ok := myers(mx, my)
	if !ok {
		mid = nil
		for i, l := range mx {
			mid = append(mid, edit{kind: '-', text: l, x: i, y: 0})
		}
		for j, l := range my {
			mid = append(mid, edit{kind: '+', text: l, x: len(mx), y: j})
		}
	}
	for _, op := range mid {
		op.x += pre
		op.y += pre
		ops = append(ops, op)
	}
	for k := suf; k > 0; k-- {
		ops = append(ops, edit{kind: ' ', text: x[len(x)-k], x: len(x) - k, y: len(y) - k})
	}
	return ops
}

// myers returns a shortest edit script from x to y, or false if it has
// more than maxEdits edits.
func myers(x, y []string) ([]edit, bool) {
	n, m := len(x), len(y)
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int // trace[d]: v[off-d .. off+d] before step d
	d := 0
	found := false
search:
	for ; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				i = v[off+k+1] // down: an insertion
			} else {
				i = v[off+k-1] + 1 // right: a deletion
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= m {
				found = true
				break search
			}
		}
	}
	if !found {
		return nil, false
	}
	// Walk back from (n, m) through the traces: each step is a run of
	// kept lines, then one insertion or deletion.
	at := func(d, k int) int { return trace[d][k+d] }
	var rev []edit
	i, j := n, m
	for ; d > 0; d-- {
		k := i - j
		pk := k - 1
		if k == -d || k != d && at(d, k-1) < at(d, k+1) {
			pk = k + 1
		}
		pi := at(d, pk)
		pj := pi - pk
		for i > pi && j > pj {
			i--
			j--
			rev = append(rev, edit{kind: ' ', text: x[i], x: i, y: j})
		}
		if i == pi {
			j--
			rev = append(rev, edit{kind: '+', text: y[j], x: i, y: j})
		} else {
			i--
			rev = append(rev, edit{kind: '-', text: x[i], x: i, y: j})
		}
	}
	for i > 0 && j > 0 {
		i--
		j--
		rev = append(rev, edit{kind: ' ', text: x[i], x: i, y: j})
	}
	ops := make([]edit, len(rev))
	for k := range rev {
		ops[len(rev)-1-k] = rev[k]
	}
	return ops, true
}
