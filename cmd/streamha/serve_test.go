package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/reports/browsertest"
)

// pageLink finds the targets of links, frames and forms in a page.
var pageLink = regexp.MustCompile(`(?:href|src|action)="([^"]*)"`)

// TestServeListsOpensAndComparesRuns: the same command run twice keeps two
// directories; the page lists both (and a third run of another strategy)
// with their verdicts, opens each report, and puts two runs side by side.
func TestServeListsOpensAndComparesRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	exp := writeFile(t, "exp.yaml", sweepTestExperiment)
	for _, s := range []string{"amnesia", "amnesia", "passive-standby"} {
		code, _, errOut := runCLI(t, "run", "--config", exp, "--strategy", s, "--quiet")
		require.Equal(t, 0, code, errOut)
	}
	dirs, err := filepath.Glob(filepath.Join(outRoot, "small-7-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 3)

	srv := httptest.NewServer(newBrowser(outRoot))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	code, page := get("/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, "<h2>Runs</h2>")
	assert.NotContains(t, page, `value="latest"`, "the latest link is not a second copy")
	for _, d := range dirs {
		name := filepath.Base(d)
		assert.Contains(t, page, `value="`+name+`"`)
		assert.Contains(t, page, `href="files/`+name+`/report.html"`)
		code, report := get("/files/" + name + "/report.html")
		assert.Equal(t, http.StatusOK, code)
		assert.Contains(t, strings.ToLower(report), "<html")
	}
	assert.Contains(t, page, `amnesia: <span class="gap">gap</span>`)
	assert.Contains(t, page, `passive-standby: <span class="precise">precise</span>`)

	a, b := filepath.Base(dirs[0]), filepath.Base(dirs[2])
	code, cmp := get("/compare?" + url.Values{"a": {a}, "b": {b}}.Encode())
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, cmp, a+" vs "+b)
	// Each strategy in the colour of its figures.
	assert.Contains(t, cmp, `<span class="sw" style="background:`+reports.StrategyHex("amnesia")+`"></span>amnesia</td>`)
	assert.Contains(t, cmp, `<span class="sw" style="background:`+reports.StrategyHex("passive-standby")+`"></span>passive-standby</td>`)
	assert.Contains(t, cmp, "not run", "each run has a strategy the other lacks")
	assert.Contains(t, cmp, `src="files/`+a+`/report.html"`)
	assert.Contains(t, cmp, `src="files/`+b+`/report.html"`)
	assert.Contains(t, cmp, "<h2>B − A</h2>")
	assert.Contains(t, cmp, "<th colspan=\"3\">cpu×</th>", "cost columns")
	assert.Contains(t, page, "inputs lost; output normal again", "a gap's time is not read as a recovery")

	// Every link and frame of both pages resolves, as a browser would
	// follow them from the page's own address.
	followed := 0
	for _, page := range []struct{ path, body string }{{"/", page}, {"/compare", cmp}} {
		for _, m := range pageLink.FindAllStringSubmatch(page.body, -1) {
			ref := m[1]
			if strings.HasPrefix(ref, "#") {
				continue
			}
			base, err := url.Parse(srv.URL + page.path)
			require.NoError(t, err)
			u, err := base.Parse(ref)
			require.NoError(t, err)
			if ref == "compare" {
				continue // the form's action, with parameters tested above
			}
			code, _ := get(u.RequestURI())
			assert.Equal(t, http.StatusOK, code, "%s on %s", ref, page.path)
			followed++
		}
	}
	assert.GreaterOrEqual(t, followed, 10)

	for _, bad := range []string{"/compare?a=" + a + "&b=nowhere", "/compare", "/files/../exp.yaml", "/files/%2e%2e/exp.yaml"} {
		code, _ := get(bad)
		assert.NotEqual(t, http.StatusOK, code, bad)
	}
}

// TestServeInABrowser opens the page of `streamha serve`, one of the
// reports it lists and the side-by-side comparison in headless Chromium:
// no browser or JavaScript error, no broken reference, no blank page, and
// at 400 px neither page reaches past the screen's edge nor cuts the list
// off. It is skipped without Chromium (.ci/run installs it).
//
// STREAMHA_SERVE_ROOT=DIR serves that directory instead of the test's own
// runs (its two newest runs compared); with STREAMHA_SCREENSHOTS=DIR the
// list and the comparison are kept as serve-list.png, serve-compare.png
// and, 400 px wide, serve-list-400.png and serve-compare-400.png (the
// screenshots in docs/img are made so).
func TestServeInABrowser(t *testing.T) {
	chromium := browsertest.Require(t)
	root := os.Getenv("STREAMHA_SERVE_ROOT")
	if root != "" {
		abs, err := filepath.Abs(root)
		require.NoError(t, err)
		root = abs
	}
	t.Chdir(t.TempDir())
	if root == "" {
		root = outRoot
		exp := writeFile(t, "exp.yaml", sweepTestExperiment)
		for range 2 {
			code, _, errOut := runCLI(t, "run", "--config", exp, "--strategy", "amnesia", "--quiet")
			require.Equal(t, 0, code, errOut)
		}
	}
	// The two newest runs, as the front page lists them.
	results, err := filepath.Glob(filepath.Join(root, "*", reports.ResultFile))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(results), 2, "two runs to compare")
	modTime := func(p string) time.Time {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi.ModTime()
	}
	slices.SortStableFunc(results, func(x, y string) int { return modTime(y).Compare(modTime(x)) })
	a, b := filepath.Base(filepath.Dir(results[1])), filepath.Base(filepath.Dir(results[0]))
	srv := httptest.NewServer(newBrowser(root))
	defer srv.Close()
	keep := os.Getenv("STREAMHA_SCREENSHOTS")
	for name, path := range map[string]string{
		"list":    "/",
		"report":  "/files/" + a + "/report.html",
		"compare": "/compare?" + url.Values{"a": {a}, "b": {b}}.Encode(),
	} {
		shot := browsertest.Screenshot(t, chromium, srv.URL+path)
		browsertest.RequireDrawn(t, name, shot)
		if name == "report" {
			continue // the reports' own test checks them narrow
		}
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		page, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		browsertest.RequireFits(t, chromium, name, string(page), browsertest.NarrowWidth, "table.list", "h1")
		if keep != "" {
			require.NoError(t, os.WriteFile(filepath.Join(keep, "serve-"+name+".png"), shot, 0o644))
			narrow := browsertest.ScreenshotNarrow(t, chromium, string(page), srv.URL+path, browsertest.NarrowWidth, 2400)
			require.NoError(t, os.WriteFile(filepath.Join(keep, "serve-"+name+"-400.png"), narrow, 0o644))
		}
	}
}
