package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClassifyReadsStreamhaTraces: classify on two traces of a run gives
// the run's own verdict (as in result.json), and so does classify on the
// output logs 'trace export' writes from them.
func TestClassifyReadsStreamhaTraces(t *testing.T) {
	dir := t.TempDir()
	exp := writeFile(t, "exp.yaml", sweepTestExperiment)
	run := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "run", "--config", exp, "--strategy", "amnesia", "--out", run, "--quiet")
	require.Equal(t, 0, code, errOut)
	var result struct {
		Runs []struct {
			Recovery struct {
				Type       string `json:"type"`
				Wrong      int    `json:"wrong"`
				Missing    int    `json:"missing"`
				LostInputs int64  `json:"lost_inputs"`
			} `json:"recovery"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(run, "result.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &result))
	want := result.Runs[0].Recovery
	require.Equal(t, "gap", want.Type)

	type verdict struct {
		Type       string `json:"type"`
		Wrong      int    `json:"wrong"`
		Missing    int    `json:"missing"`
		LostInputs int64  `json:"lost_inputs"`
	}
	classifyJSON := func(expected, observed string) verdict {
		t.Helper()
		code, out, errOut := runCLI(t, "classify", "--json", "--expected", expected, "--observed", observed)
		require.Equal(t, 0, code, errOut)
		var v verdict
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		return v
	}
	ref, faulty := filepath.Join(run, "trace-reference.jsonl"), filepath.Join(run, "trace-amnesia.jsonl")
	fromTraces := classifyJSON(ref, faulty)
	assert.Equal(t, verdict(want), fromTraces)

	refLog, faultyLog := filepath.Join(dir, "ref.jsonl"), filepath.Join(dir, "amnesia.jsonl")
	for _, p := range [][2]string{{ref, refLog}, {faulty, faultyLog}} {
		code, _, errOut := runCLI(t, "trace", "export", p[0], "--out", p[1])
		require.Equal(t, 0, code, errOut)
	}
	fromLogs := classifyJSON(refLog, faultyLog)
	assert.Equal(t, want.Type, fromLogs.Type)
	assert.Equal(t, want.Wrong, fromLogs.Wrong)
	assert.Equal(t, want.Missing, fromLogs.Missing)
	// A trace against an exported log: the same deliveries either way.
	assert.Equal(t, fromLogs, classifyJSON(refLog, faulty))

	// An output log is not a trace to export.
	code, _, errOut = runCLI(t, "trace", "export", refLog)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "not a streamha trace")
}

// TestLabStrategyIsNeverListed: lab 5's skeleton runs when named (the
// lab's commands need it) but is not offered as a strategy anywhere else.
func TestLabStrategyIsNeverListed(t *testing.T) {
	code, _, errOut := runCLI(t, "run", "--strategy", "nope", "--no-out")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "passive-standby")
	assert.NotContains(t, errOut, "my-strategy")
	code, out, errOut := runCLI(t, "strategies", "--all")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "my-strategy")
	code, _, errOut = runCLI(t, "run", "--strategy", "my-strategy", "--no-out", "--quiet")
	assert.Equal(t, 0, code, errOut)
}
