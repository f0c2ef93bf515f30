package traceview

import (
	"bytes"
	"context"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// The page in a real browser: Debian's chromium, headless, driven over
// the DevTools protocol (chromedp). `make test` installs chromium
// (Makefile, target chromium); without it these tests skip and say so.

// screenshot is the picture of the viewer that docs/trace-viewer.md
// shows, rewritten by go test -update.
const screenshot = "../docs/images/trace-viewer.png"

// browser is a headless chromium on a fresh profile, with every
// request the pages make recorded.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (make chromium installs Debian's): the page is not tested in a browser")
	}
	// The flags this machine's chromium needs (no sandbox as root, no
	// background connections to a network that is not there).
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 900),
	}
	// A hang guard, not a measure: a page this size renders in well
	// under a second.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	b := &browser{}
	ctx, cancelCtx := chromedp.NewContext(ctx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.requests = append(b.requests, e.Request.URL)
			b.mu.Unlock()
		}
	}))
	t.Cleanup(cancelCtx)
	b.ctx = ctx
	return b
}

// open writes page to a file and loads it; it returns the file's URL.
func (b *browser) open(t *testing.T, page []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "run.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: file}).String()
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1600, 900), chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("#timeline"))); err != nil {
		t.Fatalf("loading %s: %v", u, err)
	}
	return u
}

// onlyRequest checks that the page made no request but its own load.
func (b *browser) onlyRequest(t *testing.T, u string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		if r != u {
			t.Errorf("the page requested %s; it must fetch nothing", r)
		}
	}
}

// eval evaluates the JavaScript expression js in the page.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// text is the text of the element sel.
func text(t *testing.T, b *browser, sel string) string {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("the text of %s: %v", sel, err)
	}
	return v
}

// click clicks the element sel and waits until the element show is
// visible.
func click(t *testing.T, b *browser, sel, show string) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS(show))); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

// The sample run (testdata/review) in chromium: the lanes and steps
// are there, a click on a branch's step shows its prompt and reply, the
// budget stop is marked, the page fetched nothing; and the screenshot
// the docs show.
func TestBrowserReview(t *testing.T) {
	v := readSample(t)
	var page bytes.Buffer
	if err := Render(&page, v); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	u := b.open(t, page.Bytes())

	lanes := eval[int](t, b, `document.querySelectorAll("#timeline .lane-head").length`)
	steps := eval[int](t, b, `document.querySelectorAll("#timeline button.step:not(.stop)").length`)
	stops := eval[int](t, b, `document.querySelectorAll("#timeline button.step.stop").length`)
	narration := eval[int](t, b, `document.querySelectorAll("#narration li").length`)
	// The run's lane and one per reviewer; the block, three reviewers
	// and the judge; the stop before the writer.
	if lanes != 4 || steps != 5 || stops != 1 || narration != len(v.Narration) {
		t.Errorf("the page shows %d lanes, %d steps, %d stops, %d narration lines; want 4, 5, 1, %d",
			lanes, steps, stops, narration, len(v.Narration))
	}
	// The branches are side by side: their steps share a row.
	rows := eval[[]string](t, b, `Array.from(document.querySelectorAll("#timeline button.step.k-llm")).map(e => Math.round(e.getBoundingClientRect().top) + ":" + Math.round(e.getBoundingClientRect().left))`)
	if len(rows) != 3 || strings.Split(rows[0], ":")[0] != strings.Split(rows[1], ":")[0] || strings.Split(rows[1], ":")[0] != strings.Split(rows[2], ":")[0] || rows[0] == rows[1] || rows[1] == rows[2] {
		t.Errorf("the three reviewers are not side by side in one row: top:left %v", rows)
	}

	// Click the security reviewer (branch 1, retried): its details.
	sec := stepIndex(t, v, "reviews @ review.vvm:11:1/1 > reviewer @ review.vvm:13:14")
	hidden := eval[bool](t, b, `document.getElementById("d-`+sec+`").hidden`)
	if !hidden {
		t.Fatal("a step's details show before any click")
	}
	click(t, b, "#s-"+sec, "#d-"+sec)
	prompt := text(t, b, "#d-"+sec+" .prompt pre")
	reply := text(t, b, "#d-"+sec+" .reply pre")
	meta := text(t, b, "#d-"+sec+" dl")
	selected := eval[string](t, b, `Array.from(document.querySelectorAll(".selected")).map(e => e.id || e.textContent).join("|")`)
	if !strings.HasPrefix(prompt, "Review this change for security.") {
		t.Errorf("the prompt panel shows %q", prompt)
	}
	if reply != "No issues: the renamed function takes no input." {
		t.Errorf("the reply panel shows %q", reply)
	}
	for _, want := range []string{"attempts\n2", "409 → 41 tok", "$0.0027", "1 s", "reviews · branch 1"} {
		if !strings.Contains(meta, want) {
			t.Errorf("the step's details lack %q:\n%s", want, meta)
		}
	}
	if !strings.Contains(selected, "s-"+sec) || !strings.Contains(selected, "Spawning subagent: reviewer") {
		t.Errorf("the clicked step and its narration are not both selected: %q", selected)
	}
	shown := eval[int](t, b, `document.querySelectorAll(".detail:not([hidden])").length`)
	if shown != 1 {
		t.Errorf("%d detail panels show; want one", shown)
	}

	// The failed branch and the budget stop are marked as such.
	failColor := eval[string](t, b, `getComputedStyle(document.querySelector("button.step.st-failed")).borderLeftColor`)
	stopText := eval[string](t, b, `document.querySelector("button.step.stop").textContent`)
	if failColor != "rgb(207, 34, 46)" {
		t.Errorf("a failed step's border is %s, not the error red", failColor)
	}
	if !strings.Contains(stopText, "writer") || !strings.Contains(stopText, "budget_exceeded") {
		t.Errorf("the stop reads %q; want the refused step (writer) and budget_exceeded", stopText)
	}

	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil || img.Bounds().Dx() != 1600 || img.Bounds().Dy() != 900 {
		t.Fatalf("the screenshot is no 1600×900 PNG: %v %v", err, img.Bounds())
	}
	if *golden.Update {
		if err := os.WriteFile(screenshot, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if _, err := os.Stat(screenshot); err != nil {
		t.Errorf("%s is missing (go test -update writes it): %v", screenshot, err)
	}
	b.onlyRequest(t, u)
}

// Model output is text in the page, never markup: a reply that closes
// the script and adds an image with an onerror handler shows as itself,
// and no element, handler or request comes of it.
func TestBrowserInjection(t *testing.T) {
	var page bytes.Buffer
	if err := Write(&page, strings.NewReader(hostileTrace), Options{TraceName: "hostile.trace"}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	u := b.open(t, page.Bytes())
	imgs := eval[int](t, b, `document.querySelectorAll("img, iframe, object, embed").length`)
	scripts := eval[int](t, b, `document.scripts.length`)
	pwned := eval[bool](t, b, `window.pwned === 1`)
	title := eval[string](t, b, `document.title`)
	name := eval[string](t, b, `document.querySelector("#s-0 .name").textContent`)
	if imgs != 0 || scripts != 1 || pwned {
		t.Errorf("the hostile trace made %d images, %d scripts (want the page's 1), pwned %v", imgs, scripts, pwned)
	}
	if title != `</title><script>window.pwned=1</script> — trace` {
		t.Errorf("the title is %q", title)
	}
	if name != `<b onclick="window.pwned=1">ask</b>` {
		t.Errorf("the step's name shows as %q", name)
	}
	click(t, b, "#s-0", "#d-0")
	reply := text(t, b, "#d-0 .reply pre")
	pwned = eval[bool](t, b, `window.pwned === 1`)
	if reply != hostileReply || pwned {
		t.Errorf("the reply shows as %q (pwned %v); want %q", reply, pwned, hostileReply)
	}
	b.onlyRequest(t, u)
}

func stepIndex(t *testing.T, v *View, id string) string {
	t.Helper()
	for _, s := range v.Steps {
		if s.ID == id {
			return strconv.Itoa(s.Index)
		}
	}
	t.Fatalf("no step %s", id)
	return ""
}
