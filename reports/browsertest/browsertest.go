package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// candidates are the names a headless Chromium goes by; the
// STREAMHA_CHROMIUM environment variable names another.
var candidates = []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"}

// Find returns a headless Chromium, or "" when none is installed.
func Find() string {
	if p := os.Getenv("STREAMHA_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range candidates {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Require returns a headless Chromium, or skips the test when there is none.
func Require(t *testing.T) string {
	t.Helper()
	b := Find()
	if b == "" {
		t.Skip("no headless Chromium found (apt-get install chromium, or set STREAMHA_CHROMIUM)")
	}
	return b
}

// consoleError matches what Chromium logs for a JavaScript error or a
// resource it could not load.
var consoleError = regexp.MustCompile(`(?i)Uncaught|ERR_FILE_NOT_FOUND|net::ERR_|Failed to load resource`)

// Screenshot renders url (file:// or http://) in headless Chromium at
// 1000 px wide and returns the PNG, failing on a browser error, a console
// error or a broken reference.
func Screenshot(t *testing.T, browser, url string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "shot.png")
	// The deadline only stops a hung browser; it is not what the test checks.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--hide-scrollbars", "--window-size=1000,2400", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+t.TempDir(), "--screenshot="+out, url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "chromium on %s: %s", url, stderr.String())
	if m := consoleError.FindString(stderr.String()); m != "" {
		t.Fatalf("%s: the browser reported %q:\n%s", url, m, stderr.String())
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err, "no screenshot of %s: %s", url, stderr.String())
	return b
}

// RequireDrawn fails when the screenshot is (almost) one flat colour: an
// empty page.
func RequireDrawn(t *testing.T, name string, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err, name)
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	require.Greater(t, len(colours), 20, "%s: the page rendered almost blank", name)
}

// RequireFiguresDrawn fails when a page has no figure or an inline figure
// with nothing drawn in it, and when it refers to a file that is not there.
func RequireFiguresDrawn(t *testing.T, page string) {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	figs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(html, -1)
	require.NotEmpty(t, figs, "%s has no figure", page)
	for i, f := range figs {
		require.GreaterOrEqual(t, strings.Count(f, "<path"), 3, "%s: figure %d draws nothing", page, i)
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"#][^"]*)"`).FindAllStringSubmatch(html, -1) {
		ref := m[1]
		if strings.HasPrefix(ref, "data:") || strings.Contains(ref, "://") {
			continue
		}
		require.FileExists(t, filepath.Join(filepath.Dir(page), ref), "%s refers to a missing file", page)
	}
}

// CheckReport checks a report page (name: "run", "sweep", "cluster") in
// browser: its figures are drawn and its references resolve
// (RequireFiguresDrawn), it has a figures section that can be linked to,
// and neither its top nor its figures section renders blank
// (RequireDrawn). With STREAMHA_SCREENSHOTS=DIR it keeps the top of the
// page as report-NAME.png, its figures as report-NAME-figures.png and,
// when its strategies draw their own timelines (checkpoint histories,
// output queues), those as report-NAME-timelines.png; 400 px wide, the
// top as report-NAME-400.png and the figures as
// report-NAME-figures-400.png (the screenshots in docs/img are made so).
func CheckReport(t *testing.T, browser, name, page string) {
	t.Helper()
	RequireFiguresDrawn(t, page)
	keep := os.Getenv("STREAMHA_SCREENSHOTS")
	pages := map[string]string{"": "file://" + page, "-figures": "file://" + figuresPage(t, page)}
	if tl, ok := timelinesPage(t, page); ok {
		pages["-timelines"] = "file://" + tl
	}
	for suffix, url := range pages {
		shot := Screenshot(t, browser, url)
		RequireDrawn(t, name+suffix, shot)
		if keep != "" {
			require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+suffix+".png"), shot, 0o644))
		}
	}
	// On a 400 px screen nothing reaches past the right edge: wide tables
	// scroll within themselves, the glossary wraps.
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	RequireFits(t, browser, name, string(b), NarrowWidth, "dl.terms", "figure")
	if keep != "" {
		shot := ScreenshotNarrow(t, browser, string(b), "", NarrowWidth, 2400)
		RequireDrawn(t, name+"-400", shot)
		require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+"-400.png"), shot, 0o644))
		figs, err := os.ReadFile(figuresPage(t, page))
		require.NoError(t, err)
		shot = ScreenshotNarrow(t, browser, string(figs), "", NarrowWidth, 2400)
		RequireDrawn(t, name+"-figures-400", shot)
		require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+"-figures-400.png"), shot, 0o644))
	}
}

// NarrowWidth is the width of a phone's screen, at which every page must
// still fit, in CSS px.
const NarrowWidth = 400

// RequireFits fails when page, laid out width px wide, or an element of
// selectors reaches beyond the right edge.
func RequireFits(t *testing.T, browser, name, page string, width int, selectors ...string) {
	t.Helper()
	over := Overflow(t, browser, page, width, selectors...)
	for k, v := range over {
		require.LessOrEqual(t, v, 1.0, "%s at %d px: %s reaches %.0f px past the right edge", name, width, k, v)
	}
}

// figuresPage writes a page of a report's figures section alone, with the
// report's style, and returns its path: a screenshot of the figures as the
// report shows them (headless Chromium does not scroll to a #fragment
// before its screenshot).
func figuresPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	head, rest, ok := strings.Cut(string(b), "<body>")
	require.True(t, ok, "%s has no body", page)
	_, figs, ok := strings.Cut(rest, `<h2 id="figures">`)
	require.True(t, ok, "%s has no figures section that can be linked to", page)
	figs, _, _ = strings.Cut(figs, "<h2")
	out := filepath.Join(t.TempDir(), "figures.html")
	require.NoError(t, os.WriteFile(out, []byte(head+`<body><h2 id="figures">`+figs+"</body></html>\n"), 0o644))
	return out
}

// ownTimeline matches the caption of a figure of one strategy
// ("passive-standby: checkpoint timeline") and captures what it shows.
var ownTimeline = regexp.MustCompile(`(?s)<figcaption>[a-z][a-z0-9-]*: (.*?)</figcaption>`)

// timelinesPage writes a page of the figures a report draws of its
// strategies' own timelines (every figure of one strategy but the latency
// and output-timeline figures each strategy has), with the report's
// style, and returns its path; ok is false when it has none.
func timelinesPage(t *testing.T, page string) (path string, ok bool) {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	head, body, _ := strings.Cut(string(b), "<body>")
	var keep []string
	for _, f := range regexp.MustCompile(`(?s)<figure>.*?</figure>`).FindAllString(body, -1) {
		caption := ownTimeline.FindStringSubmatch(f)
		if caption == nil || strings.HasPrefix(caption[1], "end-to-end latency") || strings.HasPrefix(caption[1], "output timeline") {
			continue
		}
		keep = append(keep, f)
	}
	if len(keep) == 0 {
		return "", false
	}
	out := filepath.Join(t.TempDir(), "timelines.html")
	require.NoError(t, os.WriteFile(out, []byte(head+`<body><h2>Strategy timelines</h2>`+strings.Join(keep, "\n")+"</body></html>\n"), 0o644))
	return out, true
}

// Chromium's headless window is at least 500 px wide, so narrower layouts
// are rendered in a frame of the width wanted, inside a wider page.
const minWindow = 500

// narrowFrame writes a page holding page (an HTML document) in a frame
// width px wide and height px high, with a script that measures, once the
// frame is laid out, how far the frame's page and each of selectors
// reach beyond its right edge (px; ≤ 0 when inside) and how far each
// selector's content overflows the element itself ("SELECTOR (content)":
// text cut off or scrolled away), and writes it into the outer page as
// JSON in <pre id="overflow">.
func narrowFrame(t *testing.T, page string, width, height int, selectors []string) string {
	t.Helper()
	sel, err := json.Marshal(selectors)
	require.NoError(t, err)
	outer := fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0;display:block}</style></head><body>
<iframe id="f" width="%d" height="%d" srcdoc="%s"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, w = this.contentWindow.innerWidth, out = {"page": d.documentElement.scrollWidth - w};
  %s.forEach(function (s) {
    var m = -1e9, c = -1e9;
    d.querySelectorAll(s).forEach(function (e) {
      m = Math.max(m, e.getBoundingClientRect().right - w);
      c = Math.max(c, e.scrollWidth - e.clientWidth);
    });
    out[s] = m;
    out[s + " (content)"] = c;
  });
  var p = document.createElement("pre");
  p.id = "overflow";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script></body></html>
`, width, height, html.EscapeString(page), sel)
	path := filepath.Join(t.TempDir(), "narrow.html")
	require.NoError(t, os.WriteFile(path, []byte(outer), 0o644))
	return path
}

// overflowJSON finds the measurements narrowFrame's script wrote.
var overflowJSON = regexp.MustCompile(`<pre id="overflow">([^<]*)</pre>`)

// Overflow lays page (an HTML document) out width px wide in headless
// Chromium and returns how far the page ("page") and the elements each
// selector matches reach beyond the right edge, and how far their content
// overflows them ("SELECTOR (content)"), in px (≤ 0: no horizontal
// overflow; -1e9 when a selector matches nothing).
func Overflow(t *testing.T, browser, page string, width int, selectors ...string) map[string]float64 {
	t.Helper()
	path := narrowFrame(t, page, width, 2400, selectors)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,2400", max(width, minWindow)), "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	m := overflowJSON.FindSubmatch(stdout.Bytes())
	require.NotNil(t, m, "the page was not measured: %s", stderr.String())
	out := map[string]float64{}
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &out))
	return out
}

// ScreenshotNarrow renders page (an HTML document) width px wide and
// returns the top height px as a PNG. base, when not "", is the address
// the page's relative references resolve against (the page's own: a
// server's frames and links).
func ScreenshotNarrow(t *testing.T, browser, page, base string, width, height int) []byte {
	t.Helper()
	if base != "" {
		page = strings.Replace(page, "<head>", `<head><base href="`+html.EscapeString(base)+`">`, 1)
	}
	path := narrowFrame(t, page, width, height, nil)
	out := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,%d", max(width, minWindow), height), "--user-data-dir="+t.TempDir(), "--screenshot="+out, "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", stderr.String())
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	sub, ok := img.(interface {
		SubImage(r image.Rectangle) image.Image
	})
	require.True(t, ok, "a screenshot that cannot be cropped")
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, sub.SubImage(image.Rect(0, 0, width, height))))
	return b.Bytes()
}
