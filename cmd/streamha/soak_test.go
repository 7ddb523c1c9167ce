package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/sim"
)

func TestSoakCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "soak", "--runs", "3", "--strategy", "amnesia,upstream-backup", "--workers", "2",
		"--seed", "5", "--out", dir, "--json")
	require.Equal(t, 0, code, errOut)
	var sum soakSummary
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.Equal(t, 6, sum.Total)
	require.Len(t, sum.Strats, 2)
	for _, st := range sum.Strats {
		assert.Equal(t, 3, st.Runs)
		assert.Zero(t, st.Failures)
		assert.NotEmpty(t, st.Faults)
		outside := 0
		for _, n := range st.OutsidePromise {
			outside += n
		}
		assert.Equal(t, st.Runs, st.PreciseChecked+outside, "every run is in the promise or outside it for one reason")
	}
	assert.Equal(t, map[string]int{sim.RuleNotPromised: 3}, sum.Strats[0].OutsidePromise, "amnesia promises nothing")

	code, out, errOut = runCLI(t, "soak", "--runs", "2", "--strategy", "amnesia", "--start", "40", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "runs 40..41 per strategy")
	assert.Contains(t, out, "amnesia")
	assert.Contains(t, out, "outside the precise promise (runs per reason)")
}

// TestSoakCommandDeterminismAndCoverage: --check-determinism reruns every
// tenth run, the summary counts the rare states reached, and the classic
// generator still runs.
func TestSoakCommandDeterminismAndCoverage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "soak", "--runs", "2", "--strategy", "amnesia", "--seed", "5", "--out", dir,
		"--check-determinism", "--json")
	require.Equal(t, 0, code, errOut)
	var sum soakSummary
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.Equal(t, 1, sum.Rechecked, "run 0 is rerun")
	assert.NotNil(t, sum.Coverage)

	code, out, errOut = runCLI(t, "soak", "--runs", "2", "--strategy", "amnesia", "--generator", "classic", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "coverage (runs reaching each rare state, of 2)")
}

func TestSoakCommandBadFlags(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"soak", "--runs", "0"},
		{"soak", "--workers", "0"},
		{"soak", "--strategy", "nope"},
		{"soak", "--strategy", ","},
		{"soak", "--max-failures", "-1"},
		{"soak", "--generator", "nope"},
		{"soak", "--plant", "nope"},
	}
	for _, args := range cases {
		code, _, errOut := runCLI(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
	}
}

// TestThinCoverage: a soak of at least sim.CoverageMinRuns runs names every
// rare state reached in fewer than sim.CoverageMinShare of them; a smaller
// soak names none.
func TestThinCoverage(t *testing.T) {
	t.Parallel()
	cov := map[string]int{}
	for _, s := range sim.CoverageStates() {
		cov[s] = 10
	}
	cov[sim.CoverageStates()[0]] = 9
	assert.Equal(t, []string{sim.CoverageStates()[0] + " in 9 of 2000 runs"}, thinCoverage(soakSummary{Total: 2000, Coverage: cov}))
	assert.Empty(t, thinCoverage(soakSummary{Total: 1999, Coverage: map[string]int{}}))
}
