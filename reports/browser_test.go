package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports/browsertest"
)

// TestReportsInABrowser renders a run report in headless Chromium (package
// sweep checks a sweep report the same way) and fails on a browser or
// JavaScript error, a broken reference, an empty figure or a blank page.
// It is skipped when no Chromium is installed (apt-get install chromium).
//
// STREAMHA_REPORT_DIRS=NAME=DIR,… checks the reports in those directories
// too (a run, sweep or cluster directory; a NAME of run takes the place of
// the test's own). With STREAMHA_SCREENSHOTS=DIR it keeps, for each report
// NAME, the top of the page as report-NAME.png and its figures as
// report-NAME-figures.png (the screenshots in docs/img are made so).
func TestReportsInABrowser(t *testing.T) {
	browser := browsertest.Require(t)
	cmp := compareRun(t)
	AddModelsFromConfig(cmp.Result)
	runDir := t.TempDir()
	require.NoError(t, WriteRunDir(runDir, cmp.Result, cmp.Reference, traces(cmp)))

	dirs := map[string]string{"run": runDir}
	if env := os.Getenv("STREAMHA_REPORT_DIRS"); env != "" {
		for _, kv := range strings.Split(env, ",") {
			name, dir, ok := strings.Cut(kv, "=")
			require.True(t, ok && name != "" && dir != "", "STREAMHA_REPORT_DIRS: %q is not NAME=DIR", kv)
			abs, err := filepath.Abs(dir)
			require.NoError(t, err)
			dirs[name] = abs
		}
	}
	for name, dir := range dirs {
		browsertest.CheckReport(t, browser, name, filepath.Join(dir, "report.html"))
	}
	// The run report opens its figures with the one comparing every
	// strategy, and the glossary fits a narrow screen.
	page, err := os.ReadFile(filepath.Join(runDir, "report.html"))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(runDir, CompareFigureName+".png"))
	_, figs, ok := strings.Cut(string(page), `<h2 id="figures">`)
	require.True(t, ok)
	first := strings.Index(figs, "<figcaption>")
	require.Positive(t, first)
	require.True(t, strings.HasPrefix(figs[first:], "<figcaption>All strategies around the fault"), "the first figure compares the strategies")
	over := browsertest.Overflow(t, browser, string(page), browsertest.NarrowWidth, "dl.terms")
	require.Greater(t, over["dl.terms"], -1e8, "the glossary is there")
	require.LessOrEqual(t, over["dl.terms"], 1.0, "the glossary is not cut off at 400 px")
	require.LessOrEqual(t, over["dl.terms (content)"], 1.0, "nor scrolled away")
}
