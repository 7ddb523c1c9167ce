package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	}

	code, out, errOut = runCLI(t, "soak", "--runs", "2", "--strategy", "amnesia", "--start", "40", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "runs 40..41 per strategy")
	assert.Contains(t, out, "amnesia")
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
