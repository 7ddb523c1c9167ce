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

// figuresPage writes a page of a report's figures section alone, with the
// report's style, and returns its path: a screenshot of the figures as the
// report shows them (headless Chromium does not scroll to a #fragment
// before its screenshot).
func figuresPage(t *testing.T, page string) string {
	t.Helper()
	html := readFile(t, page)
	head, rest, ok := strings.Cut(html, "<body>")
	require.True(t, ok, "%s has no body", page)
	_, figs, ok := strings.Cut(rest, `<h2 id="figures">`)
	require.True(t, ok, "%s has no figures section", page)
	figs, _, _ = strings.Cut(figs, "<h2")
	out := filepath.Join(t.TempDir(), "figures.html")
	require.NoError(t, os.WriteFile(out, []byte(head+`<body><h2 id="figures">`+figs+"</body></html>\n"), 0o644))
	return out
}

// TestReportsInABrowser renders a run report and a sweep report in
// headless Chromium and fails on a browser or JavaScript error, a broken
// reference, an empty figure or a blank page. It is skipped when no
// Chromium is installed (apt-get install chromium).
//
// STREAMHA_REPORT_DIRS=NAME=DIR,… checks the reports in those directories
// too (a run, sweep or cluster directory; a NAME of run or sweep takes the
// place of the test's own). With STREAMHA_SCREENSHOTS=DIR it keeps, for
// each report NAME, the top of the page as report-NAME.png and its figures
// as report-NAME-figures.png (the screenshots in docs/img are made so).
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

	dirs := map[string]string{"run": runDir, "sweep": sweepDir}
	if env := os.Getenv("STREAMHA_REPORT_DIRS"); env != "" {
		for _, kv := range strings.Split(env, ",") {
			name, dir, ok := strings.Cut(kv, "=")
			require.True(t, ok && name != "" && dir != "", "STREAMHA_REPORT_DIRS: %q is not NAME=DIR", kv)
			abs, err := filepath.Abs(dir)
			require.NoError(t, err)
			dirs[name] = abs
		}
	}
	keep := os.Getenv("STREAMHA_SCREENSHOTS")
	for name, dir := range dirs {
		page := filepath.Join(dir, "report.html")
		requireFiguresDrawn(t, page)
		require.Contains(t, readFile(t, page), `<h2 id="figures">`, "%s: the figures can be linked to", page)
		for suffix, url := range map[string]string{"": "file://" + page, "-figures": "file://" + figuresPage(t, page)} {
			shot := browsertest.Screenshot(t, browser, url)
			browsertest.RequireDrawn(t, name+suffix, shot)
			if keep != "" {
				require.NoError(t, os.WriteFile(filepath.Join(keep, "report-"+name+suffix+".png"), shot, 0o644))
			}
		}
	}
}
