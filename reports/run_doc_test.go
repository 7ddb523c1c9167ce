package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha/metrics"
)

// TestRunGlossaryHasTheRunsNumbers: the glossary under a run's table says
// how long after the fault this run's unrecovered strategies were
// observed, never a number from another run.
func TestRunGlossaryHasTheRunsNumbers(t *testing.T) {
	for _, g := range Glossary {
		assert.NotContains(t, g.Meaning, "9.7", "no run's number in the static glossary")
	}
	obs := 5300.0
	runs := []metrics.Run{
		{Strategy: "amnesia", Recovery: metrics.Recovery{NotRecovered: true, ObservedMs: &obs}},
		{Strategy: "active-standby", Recovery: metrics.Recovery{RecoveryMs: &obs}},
	}
	meaning := func(ts []Term) string {
		for _, g := range ts {
			if g.Name == "recovery ms" {
				return g.Meaning
			}
		}
		return ""
	}
	assert.Contains(t, meaning(runGlossary(runs)), "amnesia: not recovered (> 5.3 s)")
	assert.NotContains(t, meaning(runGlossary(runs[1:])), "> ")
	assert.Contains(t, meaning(runGlossary(runs[1:])), "recovered")
}

// TestClusterReportTitleAndModel: a cluster run's report is titled as
// one, models its strategies from the recorded experiment (set beside the
// measured figures), and never lists rows of "(no model)".
func TestClusterReportTitleAndModel(t *testing.T) {
	cmp := compareRun(t)
	r := cmp.Result
	r.Mode = "cluster"
	for i := range r.Runs {
		r.Runs[i].Model = nil
	}
	dir := t.TempDir()
	_, err := WriteRunReport(dir, r, cmp.Reference, traces(cmp))
	require.NoError(t, err)
	md := readFile(t, filepath.Join(dir, "report.md"))
	assert.True(t, strings.HasPrefix(md, "# streamha cluster: small, seed 7"), md[:60])
	assert.NotContains(t, md, "(no model)")
	assert.Contains(t, md, "| strategy | figure | model | measured |")

	// Without a recorded experiment: one sentence says why, no rows.
	r.Config = ""
	for i := range r.Runs {
		r.Runs[i].Model = nil
	}
	_, err = WriteRunReport(dir, r, cmp.Reference, traces(cmp))
	require.NoError(t, err)
	md = readFile(t, filepath.Join(dir, "report.md"))
	assert.Equal(t, 1, strings.Count(md, "No model: the result records no experiment to model."))
	assert.NotContains(t, md, "(no model)")
}
