package reports

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports/browsertest"
)

// TestReportsInABrowser renders a run report in headless Chromium (package
// sweep checks a sweep report the same way) and fails on a browser or JavaScript error, a broken
// reference, an empty figure or a blank page. It is skipped when no
// Chromium is installed (apt-get install chromium). With
// STREAMHA_SCREENSHOTS=DIR it keeps the screenshots in DIR.
func TestReportsInABrowser(t *testing.T) {
	browser := browsertest.Require(t)
	cmp := compareRun(t)
	AddModelsFromConfig(cmp.Result)
	runDir := t.TempDir()
	require.NoError(t, WriteRunDir(runDir, cmp.Result, cmp.Reference, traces(cmp)))

	browsertest.CheckReport(t, browser, "run", filepath.Join(runDir, "report.html"))
}
