package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
)

// TestServeComparesSweepsAndChains: the front page lists sweeps and
// chain sweeps with A/B choices, and each comparison shows A, B and
// B − A per strategy and setting (per chain length).
func TestServeComparesSweepsAndChains(t *testing.T) {
	t.Chdir(t.TempDir())
	exp := writeFile(t, "exp.yaml", sweepTestExperiment)
	for _, rates := range []string{"200,300", "300,400"} {
		code, _, errOut := runCLI(t, "sweep", "--config", exp, "--strategy", "amnesia", "--param", "source.rate="+rates, "--no-progress", "--no-report")
		require.Equal(t, 0, code, errOut)
	}
	for i, gc := range []float64{500, 620} {
		dir := filepath.Join(outRoot, "chains-"+string(rune('a'+i)))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, reports.WriteChainSweepReport(dir, &reports.ChainSweep{Setup: "test", Command: "streamha chain-sweep",
			Points: []reports.ChainPoint{{Fragments: 3, GCRestartMs: gc, GCModelMs: 550, GCRecoveryMs: gc + 10, PSRestartMs: 300, PSModelMs: 320, PSRecoveryMs: -1}}}))
	}
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
	assert.Contains(t, page, `action="compare-sweeps"`)
	assert.Contains(t, page, `action="compare-chains"`)
	sweeps, err := filepath.Glob(filepath.Join(outRoot, "sweep-*"))
	require.NoError(t, err)
	require.Len(t, sweeps, 2)

	code, cmp := get("/compare-sweeps?" + url.Values{"a": {filepath.Base(sweeps[0])}, "b": {filepath.Base(sweeps[1])}}.Encode())
	require.Equal(t, http.StatusOK, code, cmp)
	assert.Contains(t, cmp, "<th>B − A</th>")
	assert.Contains(t, cmp, "<td>300</td>", "the setting both sweeps ran")
	assert.Contains(t, cmp, "<td>200</td>", "a setting only A ran")

	code, ch := get("/compare-chains?" + url.Values{"a": {"chains-a"}, "b": {"chains-b"}}.Encode())
	require.Equal(t, http.StatusOK, code, ch)
	assert.Contains(t, ch, `<td class="n">500.0</td><td class="n">620.0</td><td class="n">&#43;120.0</td>`, "global-checkpoint's restart, A, B, B − A")
	assert.NotContains(t, ch, "-1.0", "no restart or recovery is none, not −1")

	for _, bad := range []string{"/compare-sweeps?a=nowhere&b=nowhere", "/compare-chains"} {
		code, _ := get(bad)
		assert.Equal(t, http.StatusNotFound, code, bad)
	}
}

// TestOutcomeNeverReadsAGapAsARecovery: the list says what a recovery
// time means for each verdict.
func TestOutcomeNeverReadsAGapAsARecovery(t *testing.T) {
	ms, obs := 222.4, 9700.0
	assert.Equal(t, "1122 inputs lost; output normal again 222.4 ms after the fault",
		outcome(metrics.Recovery{Type: "gap", LostInputs: 1122, RecoveryMs: &ms}))
	assert.Equal(t, "recovered in 222.4 ms", outcome(metrics.Recovery{Type: "precise", RecoveryMs: &ms}))
	assert.Equal(t, "not recovered (> 9.7 s)", outcome(metrics.Recovery{Type: "gap", NotRecovered: true, ObservedMs: &obs}))
	assert.Equal(t, "no fault", outcome(metrics.Recovery{Type: "precise"}))
	assert.Equal(t, "+2.0", diffCell(&ms, ms+2, 1))
	assert.Equal(t, "–", diffCell(nil, &ms, 1))
	assert.False(t, strings.Contains(diffCell(1.0, 1.0, 1), "-"), "no negative zero")
}
