package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/sim"
)

// TestNotRecoveredShownEverywhere: a run whose crashed fragment never comes
// back (no spare) says "not recovered" with the time observed in the
// terminal table, in result.json (recovery_ms null), in the report and in
// both of its figures — never a recovery time.
func TestNotRecoveredShownEverywhere(t *testing.T) {
	// The test experiment without a spare: B never comes back.
	noSpare := strings.Replace(testExperiment, "spares: 1", "spares: 0", 1)
	require.NotEqual(t, testExperiment, noSpare)
	e, err := experiment.Parse([]byte(noSpare), "nospare")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"amnesia"})
	require.NoError(t, err)

	rec := cmp.Result.Runs[0].Recovery
	require.True(t, rec.NotRecovered)
	require.NotNil(t, rec.ObservedMs)
	observed := fmt.Sprintf("not recovered (> %.1f s)", *rec.ObservedMs/1e3)
	require.Equal(t, observed, rec.RecoveryText())

	var term bytes.Buffer
	require.NoError(t, Table(&term, cmp.Result))
	assert.Contains(t, term.String(), observed)

	dir := t.TempDir()
	require.NoError(t, WriteRunDir(dir, cmp.Result, cmp.Reference, traces(cmp)))
	var res struct {
		Runs []struct {
			Recovery map[string]any `json:"recovery"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "result.json"))), &res))
	require.Len(t, res.Runs, 1)
	got := res.Runs[0].Recovery
	assert.Contains(t, got, "recovery_ms")
	assert.Nil(t, got["recovery_ms"], "null, never a number")
	assert.Equal(t, true, got["not_recovered"])
	assert.InDelta(t, *rec.ObservedMs, got["observed_ms"], 1e-9)

	assert.Contains(t, readFile(t, filepath.Join(dir, "report.html")), html.EscapeString(observed))
	crash := 3.4 // s, testExperiment's fault
	for _, fig := range []string{"latency-amnesia.svg", "outputs-amnesia.svg"} {
		svg := readFile(t, filepath.Join(dir, fig))
		assert.Contains(t, svg, fmt.Sprintf("not recovered: %.2f s → end", crash), fig)
		assert.Contains(t, svg, fmt.Sprintf("end of run at %.2f s", crash+*rec.ObservedMs/1e3), fig)
		assert.NotContains(t, svg, "fault → recovery", fig)
	}
	_, err = os.Stat(filepath.Join(dir, "timeline-amnesia.svg"))
	assert.True(t, os.IsNotExist(err), "amnesia registers no timeline")
	// The figures comparing the strategies say so too, never a time.
	assert.Contains(t, readFile(t, filepath.Join(dir, CompareFigureName+".svg")), html.EscapeString(observed)+" →")
	assert.Contains(t, readFile(t, filepath.Join(dir, CostFigureName+".svg")), "amnesia: "+html.EscapeString(observed))
}
