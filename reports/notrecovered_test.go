package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/sim"
)

// TestNotRecoveredShownEverywhere: a run whose crashed fragment never comes
// back (no spare) says "not recovered" with the time observed in the
// terminal table, in result.json (recovery_ms null), in the report and in
// both of its figures — never a recovery time.
func TestNotRecoveredShownEverywhere(t *testing.T) {
	e, err := sim.Parse([]byte(`name: nospare
seed: 42
duration: 4s
drain: 1s
source: {rate: 500, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
spares: 0
faults:
  - {at: 2s, crash: B}
`), "nospare")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"amnesia"})
	require.NoError(t, err)

	var term bytes.Buffer
	require.NoError(t, Table(&term, cmp.Result))
	assert.Contains(t, term.String(), "not recovered (> 3.0 s)")

	dir := t.TempDir()
	require.NoError(t, WriteRunDir(dir, cmp.Result, cmp.Reference, traces(cmp)))
	var res struct {
		Runs []struct {
			Recovery map[string]any `json:"recovery"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "result.json"))), &res))
	require.Len(t, res.Runs, 1)
	rec := res.Runs[0].Recovery
	assert.Contains(t, rec, "recovery_ms")
	assert.Nil(t, rec["recovery_ms"], "null, never a number")
	assert.Equal(t, true, rec["not_recovered"])
	assert.InDelta(t, 3000, rec["observed_ms"], 1)

	assert.Contains(t, readFile(t, filepath.Join(dir, "report.html")), "not recovered (&gt; 3.0 s)")
	for _, fig := range []string{"latency-amnesia.svg", "outputs-amnesia.svg"} {
		svg := readFile(t, filepath.Join(dir, fig))
		assert.Contains(t, svg, "not recovered: 2.00 s → end", fig)
		assert.Contains(t, svg, "end of run at 5.00 s", fig)
		assert.NotContains(t, svg, "fault → recovery", fig)
	}
	_, err = os.Stat(filepath.Join(dir, "checkpoints-amnesia.svg"))
	assert.True(t, os.IsNotExist(err), "amnesia takes no checkpoint: no timeline")
}
