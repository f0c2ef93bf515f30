package format

import (
	"fmt"
	"strings"
)

// diffContextLines is how many unchanged lines a hunk of Diff shows around a
// change, as diff -u does.
const diffContextLines = 3

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
	x, y := diffLines(string(a)), diffLines(string(b))
	ops := diffScript(x, y)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	// Group the edits into hunks: runs of changes no more than
	// 2*diffContextLines unchanged lines apart.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContextLines, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*diffContextLines {
				break
			}
		}
		end = min(end+diffContextLines, len(ops))
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
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", diffHunkRange(ax, nx), diffHunkRange(ay, ny))
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

// diffHunkRange is the range of a hunk header: from line start (from 0) for
// n lines, as diff -u writes it.
func diffHunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffLines splits s into lines, each with its line break (the last
// one may have none).
func diffLines(s string) []string {
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

// A diffEdit is one line of an edit script: kept (' '), deleted ('-') or
// inserted ('+'), with the index of the line in the old text (x) and the
// new one (y) where it stands.
type diffEdit struct {
	kind byte
	text string
	x, y int
}

// diffMaxEdits bounds the search of a shortest edit script: past it, the
// differing middle of the texts is written as deleted then inserted
// whole, which is a correct diff if not the shortest, and keeps the time
// and memory of the search bounded (its trace is quadratic in the edits).
const diffMaxEdits = 2000

// diffScript returns an edit script from x to y: the lines they start
// and end with in common kept, and a shortest script for the lines
// between (Myers' greedy algorithm) when it has at most diffMaxEdits edits.
func diffScript(x, y []string) []diffEdit {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []diffEdit
	for i := 0; i < pre; i++ {
		ops = append(ops, diffEdit{kind: ' ', text: x[i], x: i, y: i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	mid, ok := myersDiff(mx, my)
	if !ok {
		mid = nil
		for i, l := range mx {
			mid = append(mid, diffEdit{kind: '-', text: l, x: i, y: 0})
		}
		for j, l := range my {
			mid = append(mid, diffEdit{kind: '+', text: l, x: len(mx), y: j})
		}
	}
	for _, op := range mid {
		op.x += pre
		op.y += pre
		ops = append(ops, op)
	}
	for k := suf; k > 0; k-- {
		ops = append(ops, diffEdit{kind: ' ', text: x[len(x)-k], x: len(x) - k, y: len(y) - k})
	}
	return ops
}

// myersDiff returns a shortest edit script from x to y, or false if it has
// more than diffMaxEdits edits.
func myersDiff(x, y []string) ([]diffEdit, bool) {
	n, m := len(x), len(y)
	maxD := min(n+m, diffMaxEdits)
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
	var rev []diffEdit
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
			rev = append(rev, diffEdit{kind: ' ', text: x[i], x: i, y: j})
		}
		if i == pi {
			j--
			rev = append(rev, diffEdit{kind: '+', text: y[j], x: i, y: j})
		} else {
			i--
			rev = append(rev, diffEdit{kind: '-', text: x[i], x: i, y: j})
		}
	}
	for i > 0 && j > 0 {
		i--
		j--
		rev = append(rev, diffEdit{kind: ' ', text: x[i], x: i, y: j})
	}
	ops := make([]diffEdit, len(rev))
	for k := range rev {
		ops[len(rev)-1-k] = rev[k]
	}
	return ops, true
}
