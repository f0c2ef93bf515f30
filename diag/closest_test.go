package diag

import "testing"

// TestClosest checks the "did you mean" every frontend shares: a near
// word is suggested, a far one or the word itself is not, ties go to the
// first, and long words are never near.
func TestClosest(t *testing.T) {
	long := "a_name_that_runs_on_for_more_than_sixty_four_code_points_of_text_x"
	for _, c := range []struct {
		s     string
		known []string
		max   int // -1: Closest's own budget
		want  string
	}{
		{"nmae", []string{"id", "name", "next"}, -1, "name"},
		{"next_stp", []string{"next_step", "otherwise"}, -1, "next_step"},
		{"zzzz", []string{"name", "next"}, -1, ""},
		{"name", []string{"name", "nme"}, -1, "nme"},
		{"ab", []string{"ax", "ay"}, -1, "ax"},
		{"cat", []string{"cart"}, 0, ""},
		{"cat", []string{"cart"}, 1, "cart"},
		{"état", []string{"etat"}, 1, "etat"},
		{long + "y", []string{long + "z"}, 10, ""},
	} {
		var got string
		if c.max < 0 {
			got = Closest(c.s, c.known)
		} else {
			got = ClosestWithin(c.s, c.known, c.max)
		}
		if got != c.want {
			t.Errorf("closest to %q of %q (budget %d) = %q, want %q", c.s, c.known, c.max, got, c.want)
		}
	}
}
