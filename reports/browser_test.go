package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports/browsertest"
)

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
	browser := browsertest.Require(t)
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
		shot := browsertest.Screenshot(t, browser, "file://"+page)
		browsertest.RequireDrawn(t, name, shot)
		if keep != "" {
			require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+".png"), shot, 0o644))
		}
	}
}
