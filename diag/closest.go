package diag

// Closest returns the word of known nearest to s, if it is near enough to
// be a likely typo of it: at most len(s)/3+1 edits away (len in bytes).
// "" when none is. It is the one "did you mean" of every frontend; see
// ClosestWithin.
func Closest(s string, known []string) string {
	return ClosestWithin(s, known, len(s)/3+1)
}

// ClosestWithin returns the word of known nearest to s by edit distance
// (Levenshtein, in code points), when it is at most maxEdits edits away;
// "" when none is. Of equally near words the first wins, so known must
// be in a fixed order; s itself is never suggested. Words of more than
// 64 code points are simply far apart: no quadratic work on hostile
// input.
func ClosestWithin(s string, known []string, maxEdits int) string {
	best, bestD := "", maxEdits+1
	for _, k := range known {
		if k == s {
			continue
		}
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b in code points;
// past 64 code points, the length of the longer.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return max(len(ra), len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
