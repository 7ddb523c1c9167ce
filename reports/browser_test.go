package reports

import (
	"bytes"
	"context"
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

// browserCandidates are the names a headless Chromium goes by; the
// STREAMHA_CHROMIUM environment variable names another.
var browserCandidates = []string{"chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"}

// findBrowser returns a headless Chromium, or "" when none is installed.
func findBrowser() string {
	if p := os.Getenv("STREAMHA_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range browserCandidates {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// consoleError matches what Chromium logs for a JavaScript error or a
// resource it could not load.
var consoleError = regexp.MustCompile(`(?i)Uncaught|ERR_FILE_NOT_FOUND|net::ERR_|Failed to load resource`)

// screenshot renders page (an HTML file) in headless Chromium at 1000 px
// wide and returns the PNG, failing on a browser error, a console error or
// a broken reference.
func screenshot(t *testing.T, browser, page string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "shot.png")
	// The deadline only stops a hung browser; it is not what the test checks.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--hide-scrollbars", "--window-size=1000,2400", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+t.TempDir(), "--screenshot="+out, "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "chromium on %s: %s", page, stderr.String())
	if m := consoleError.FindString(stderr.String()); m != "" {
		t.Fatalf("%s: the browser reported %q:\n%s", page, m, stderr.String())
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err, "no screenshot of %s: %s", page, stderr.String())
	return b
}

// requireDrawn fails when the screenshot is one flat colour (an empty page).
func requireDrawn(t *testing.T, name string, shot []byte) {
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

// requireFiguresDrawn fails when a page has no figure or an inline figure
// with nothing drawn in it, and when it refers to a file that is not there.
func requireFiguresDrawn(t *testing.T, page string) {
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

// TestReportsInABrowser renders a run report and a sweep report in
// headless Chromium and fails on a browser or JavaScript error, a broken
// reference, an empty figure or a blank page. It is skipped when no
// Chromium is installed (apt-get install chromium). With
// STREAMHA_SCREENSHOTS=DIR it keeps the screenshots in DIR.
func TestReportsInABrowser(t *testing.T) {
	browser := findBrowser()
	if browser == "" {
		t.Skip("no headless Chromium found (apt-get install chromium, or set STREAMHA_CHROMIUM)")
	}
	cmp := compareRun(t)
	AddModelsFromConfig(cmp.Result)
	runDir := t.TempDir()
	require.NoError(t, WriteRunDir(runDir, cmp.Result, cmp.Reference, traces(cmp)))

	sw := testSweep(t)
	sweepDir := t.TempDir()
	ps, err := RunSweep(t.Context(), sweepDir, sw, SweepOptions{Workers: 2})
	require.NoError(t, err)
	meta, loaded, err := LoadSweepDir(sweepDir)
	require.NoError(t, err)
	require.Equal(t, ps, loaded)
	_, err = WriteSweepReport(sweepDir, meta, loaded)
	require.NoError(t, err)

	keep := os.Getenv("STREAMHA_SCREENSHOTS")
	for name, dir := range map[string]string{"run": runDir, "sweep": sweepDir} {
		page := filepath.Join(dir, "report.html")
		requireFiguresDrawn(t, page)
		shot := screenshot(t, browser, page)
		requireDrawn(t, name, shot)
		if keep != "" {
			require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+".png"), shot, 0o644))
		}
	}
}
