package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/reports"
)

func TestChainSweepRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fragments", "1,3"}, "--fragments"},
		{[]string{"--fragments", "three"}, "--fragments"},
		{[]string{"--keys", "0"}, "--keys"},
		{[]string{"--rate", "0"}, "--rate"},
		{[]string{"--seeds", "0"}, "--seeds"},
		{[]string{"--interval", "0s"}, "--interval"},
	} {
		code, _, errOut := runCLI(t, append([]string{"chain-sweep"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// TestChainSweepRestartsEveryFragment runs two short chains: global
// rollback's restart time is longer for the longer chain, and the table,
// CSV and plot are written.
func TestChainSweepRestartsEveryFragment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two chains in the simulator")
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "chain-sweep", "--fragments", "2,4", "--seeds", "1", "--out", dir)
	require.Equal(t, 0, code, errOut)
	var gc []float64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && (f[0] == "2" || f[0] == "4") {
			v, err := strconv.ParseFloat(f[1], 64)
			require.NoError(t, err, line)
			gc = append(gc, v)
		}
	}
	require.Len(t, gc, 2, out)
	assert.Greater(t, gc[1], gc[0], "restarting 4 fragments takes longer than 2:\n%s", out)
	assert.Contains(t, errOut, "chain-sweep: run 1 of 2: chain of 2 fragments, seed 1", "progress on stderr")
	assert.Contains(t, errOut, "run 2 of 2")
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "streamha chain-sweep --fragments 2,4 --seeds 1", "the report says how to reproduce it")
	// Each strategy in its own colour, the registry's.
	for _, s := range []string{"global-checkpoint", "passive-standby"} {
		assert.Contains(t, string(page), reports.StrategyHex(s), s)
	}
	for _, f := range []string{"chain-sweep.csv", "chain-sweep.png", "chain-sweep.svg", "chain-sweep.json", "report.md"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
}
