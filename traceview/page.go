package traceview

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
)

// The page's style and script, inline in every page. The script is
// allowed by its hash in the page's Content-Security-Policy, which
// forbids every other script and every load (default-src 'none'): even
// markup that got through unescaped could neither run nor fetch.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
	//go:embed page.html.tmpl
	pageTmpl string

	scriptHash = func() string {
		h := sha256.Sum256([]byte(pageJS))
		return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
	}()

	page = template.Must(template.New("page").Funcs(template.FuncMap{
		"ms":      fmtMS,
		"cost":    fmtCost,
		"tokens":  fmtTokens,
		"size":    size,
		"row":     func(s *Step) int { return s.Row + 2 },
		"col":     func(s *Step) int { return s.Lane + 1 },
		"lanecol": func(i int) int { return i + 1 },
		"add":     func(a, b int) int { return a + b },
		"meta":    stepMeta,
		"usage":   stepUsage,
		"llmlike": func(k string) bool { return k == "llm" || k == "judge" },
		"effect":  func(k string) bool { return k == "llm" || k == "judge" || k == "tool" },
		"okrun":   func(st string) bool { return st == "success" },
	}).Parse(pageTmpl))
)

// Write reads the trace (Read) and writes its page to w.
func Write(w io.Writer, trace io.Reader, opts Options) error {
	v, err := Read(trace, opts)
	if err != nil {
		return err
	}
	return Render(w, v)
}

// Render writes v's page to w: the same View gives the same bytes.
func Render(w io.Writer, v *View) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	data := struct {
		*View
		CSS    template.CSS
		Script template.JS
		CSP    string
	}{v, template.CSS(pageCSS), template.JS(pageJS),
		"default-src 'none'; style-src 'unsafe-inline'; script-src '" + scriptHash + "'; base-uri 'none'; form-action 'none'"}
	if err := page.Execute(bw, data); err != nil {
		return err
	}
	return bw.Flush()
}

// fmtMS renders a time in milliseconds.
func fmtMS(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
}

// fmtCost renders a cost in USD to four significant digits: sums of
// binary fractions (0.0073999999999999995) are not what anyone paid.
func fmtCost(c float64) string {
	if c == 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return "$" + strconv.FormatFloat(c, 'f', -1, 64)
	}
	prec := max(2, 3-int(math.Floor(math.Log10(math.Abs(c)))))
	s := strconv.FormatFloat(c, 'f', min(prec, 20), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return "$" + s
}

// fmtTokens renders a usage: prompt → completion tokens.
func fmtTokens(t Tokens) string {
	return strconv.FormatInt(t.Prompt, 10) + " → " + strconv.FormatInt(t.Completion, 10) + " tok"
}

// stepMeta is the line under a step's name on the timeline: status,
// duration, attempts when more than one.
func stepMeta(s *Step) string {
	parts := []string{s.Status}
	if s.Duration != nil {
		parts = append(parts, fmtMS(*s.Duration))
	}
	if s.Attempts > 1 {
		parts = append(parts, strconv.Itoa(s.Attempts)+" attempts")
	}
	return strings.Join(parts, " · ")
}

// stepUsage is the line under stepMeta: tokens and cost, when the step
// has them.
func stepUsage(s *Step) string {
	var parts []string
	if s.Tokens != nil {
		parts = append(parts, fmtTokens(*s.Tokens))
	}
	if s.Cost != nil && *s.Cost != 0 {
		parts = append(parts, fmtCost(*s.Cost))
	}
	return strings.Join(parts, " · ")
}
