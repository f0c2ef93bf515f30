package diag

import (
	"fmt"
	"strings"
)

// MaxErrors is the one cap on the errors a compilation shows, whatever
// its phases and files: Render shows the first MaxErrors errors and ends
// with a line saying how many more there were. It is the number the
// Genesis requirements give ("reports up to 20 errors"); phases that stop
// early to save work (the Genesis frontend, the Forge assembler) stop at
// it too. Warnings and notes have a cap of the same size of their own,
// so that many warnings never hide an error.
const MaxErrors = 20

// maxAlsoAt is how many further places a merged warning names.
const maxAlsoAt = 3

// syntaxCodes are the codes of syntax errors, language by language (the
// code tables of docs/genesis.md, vvm.md, grimoire.md, nanovm.md, fasm.md,
// ir.md and plan.md): what a parser reports when the text does not have
// the language's form. Only these are limited to one per line.
var syntaxCodes = map[string]bool{
	"0x0800": true, // Genesis: lexical or syntax error
	"E001":   true, // VVM: unexpected token, invalid form
	"E002":   true, // VVM: inconsistent indentation
	"E003":   true, // VVM: unterminated string literal
	"E004":   true, // VVM: unterminated template literal
	"E005":   true, // VVM: unknown escape sequence
	"G001":   true, // Grimoire: unexpected or missing token
	"G002":   true, // Grimoire: malformed literal or character
	"G003":   true, // Grimoire: indentation
	"N001":   true, // nano-vm: not valid JSON or YAML
	"A001":   true, // Forge assembly: a malformed line, token or number
	"I001":   true, // printed IR: does not parse
	"P001":   true, // plan: not valid JSON
}

// IsSyntax reports whether code is the code of a syntax error in one of
// the languages: the codes whose later errors on a line are consequences
// of the first.
func IsSyntax(code string) bool { return syntaxCodes[code] }

// Omitted counts the diagnostics the reporting policy did not show
// because of the caps.
type Omitted struct {
	Errors, Warnings, Notes int
}

// Line is the line that ends a report when the caps left diagnostics
// out ("note: 12 more errors not shown (a report shows at most 20
// errors, and 20 warnings and notes)"), or "".
func (o Omitted) Line() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{o.Errors, "error"}, {o.Warnings, "warning"}, {o.Notes, "note"}} {
		if p.n > 0 {
			s := fmt.Sprintf("%d more %s", p.n, p.what)
			if p.n > 1 {
				s += "s"
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	list := parts[0]
	if len(parts) > 1 {
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return fmt.Sprintf("note: %s not shown (a report shows at most %d errors, and %d warnings and notes)", list, MaxErrors, MaxErrors)
}

// Report applies the one reporting policy of every phase to l and returns
// what is to be shown, in l's order, and what the caps left out. l is not
// changed. src, the sources being reported on, names the file of a
// diagnostic that has none when it holds one file only. In order:
//
//   - a diagnostic without a file gets the only file of src, if src has
//     exactly one;
//   - identical diagnostics (same position, code and message) are one,
//     of the highest severity among them;
//   - of the syntax errors (IsSyntax) on one line, only the first (the
//     leftmost, and of those the earliest reported) is kept: the others
//     are its consequences;
//   - a warning or note repeated with the same code and message at other
//     places is one cause: the first is kept, and its message names the
//     other places ("(also at 12:4, 15:9 and 3 more places)"); errors are
//     all kept, each being a place to fix;
//   - at most MaxErrors errors, and at most MaxErrors warnings and notes,
//     are shown; the rest are counted in Omitted.
func (l List) Report(src Sources) (List, Omitted) {
	only := ""
	if len(src) == 1 {
		for name := range src { // one key: no order to leak
			only = name
		}
	}
	type key struct {
		pos       Pos
		code, msg string
	}
	type lineKey struct {
		file string
		line int
	}
	type causeKey struct {
		sev       Severity
		code, msg string
	}
	// Merge identical diagnostics, and find the first syntax error of
	// each line.
	out := make(List, 0, len(l))
	same := map[key]int{}
	firstSyntax := map[lineKey]int{} // index in out
	dropped := map[int]bool{}        // indexes in out
	for _, d := range l {
		if d.Pos.File == "" && only != "" {
			d.Pos.File = only
		}
		k := key{d.Pos, d.Code, d.Msg}
		if i, ok := same[k]; ok {
			out[i].Severity = min(out[i].Severity, d.Severity) // Error < Warning < Note
			continue
		}
		same[k] = len(out)
		if d.Severity == Error && d.Pos.Line > 0 && IsSyntax(d.Code) {
			lk := lineKey{d.Pos.File, d.Pos.Line}
			if j, ok := firstSyntax[lk]; !ok {
				firstSyntax[lk] = len(out)
			} else if d.Pos.Col < out[j].Pos.Col {
				dropped[j] = true
				firstSyntax[lk] = len(out)
			} else {
				dropped[len(out)] = true
			}
		}
		out = append(out, d)
	}
	// The severity of a merged diagnostic may have risen to an error
	// after its line's syntax error was chosen; that changes nothing
	// above, since only errors take part.

	// Repeated warnings and notes: one report per cause.
	kept := out[:0:0]
	cause := map[causeKey]int{} // index in kept
	also := map[int][]Pos{}
	for i, d := range out {
		if dropped[i] {
			continue
		}
		if d.Severity != Error {
			ck := causeKey{d.Severity, d.Code, d.Msg}
			if j, ok := cause[ck]; ok {
				also[j] = append(also[j], d.Pos)
				continue
			}
			cause[ck] = len(kept)
		}
		kept = append(kept, d)
	}
	for j, places := range also { // each j once: the order does not matter
		kept[j].Msg += alsoAt(kept[j].Pos, places)
	}

	// The caps.
	var om Omitted
	shown := kept[:0]
	errs, others := 0, 0
	for _, d := range kept {
		switch {
		case d.Severity == Error && errs < MaxErrors:
			errs++
		case d.Severity != Error && others < MaxErrors:
			others++
		case d.Severity == Error:
			om.Errors++
			continue
		case d.Severity == Warning:
			om.Warnings++
			continue
		default:
			om.Notes++
			continue
		}
		shown = append(shown, d)
	}
	return shown, om
}

// alsoAt is what a merged warning adds to its message: the other places
// it was reported, the first maxAlsoAt of them, in the file of first
// when they are in it (line:col), else with their file.
func alsoAt(first Pos, places []Pos) string {
	var b strings.Builder
	b.WriteString(" (also at ")
	n := min(len(places), maxAlsoAt)
	for i, p := range places[:n] {
		switch {
		case i == 0:
		case i == n-1 && len(places) == n:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		switch {
		case p.File == first.File && p.Line > 0:
			fmt.Fprintf(&b, "%d:%d", p.Line, p.Col)
		default:
			b.WriteString(p.String())
		}
	}
	if rest := len(places) - n; rest > 0 {
		fmt.Fprintf(&b, " and %d more place", rest)
		if rest > 1 {
			b.WriteString("s")
		}
	}
	b.WriteString(")")
	return b.String()
}
