package sweep

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports/browsertest"
)

// TestSweepReportInABrowser renders a sweep report in headless Chromium and
// fails on a browser or JavaScript error, a broken reference, an empty
// figure or a blank page. It is skipped when no Chromium is installed.
func TestSweepReportInABrowser(t *testing.T) {
	browser := browsertest.Require(t)
	dir := t.TempDir()
	_, err := Run(t.Context(), dir, testSweep(t), Options{Workers: 2})
	require.NoError(t, err)
	_, _, err = Render(dir)
	require.NoError(t, err)
	browsertest.CheckReport(t, browser, "sweep", filepath.Join(dir, "report.html"))
}
