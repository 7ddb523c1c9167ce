package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileInputsExitTwo checks at the CLI what issue 26 found: each
// hostile input is a usage error (exit status 2) naming the file — the
// packages' tables hold the detail of each case.
func TestHostileInputsExitTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	exp := write("skew.yaml", "name: x\nsource: {rate: 100, keys: 4, skew: .inf}\nnodes: [{name: A, ops: [{map: {}}]}]\n")
	interval := write("ci.yaml", "name: x\nsource: {rate: 100, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\nstrategy: {name: passive-standby, checkpoint_interval: 1ns}\n")
	long := write("long.yaml", "name: x\nduration: 2562047h\nsource: {rate: 100, keys: 4}\nnodes: [{name: A, ops: [{map: {}}]}]\n")
	utf := write("bad.jsonl", "{\"id\": \"a\xff\", \"value\": 1}\n")
	good := write("good.jsonl", `{"id": "a", "value": 1}`+"\n")
	runDir := filepath.Join(dir, "run")
	require.NoError(t, os.MkdirAll(runDir, 0o755))
	write("run/result.json", "null\n")
	sweepDir := filepath.Join(dir, "sweep")
	require.NoError(t, os.MkdirAll(sweepDir, 0o755))
	write("sweep/sweep.json", "{}\n")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"infinite skew", []string{"run", "--no-out", "--config", exp}, "skew.yaml:2: source.skew:"},
		{"checkpoint_interval 1ns", []string{"run", "--no-out", "--config", interval}, "ci.yaml:4: strategy.checkpoint_interval:"},
		{"duration 2562047h", []string{"run", "--no-out", "--config", long}, "long.yaml:2: duration:"},
		{"sweep over a hostile experiment", []string{"sweep", "--config", exp, "--param", "seed=1,2", "--out", filepath.Join(dir, "sw")}, "source.skew"},
		{"invalid UTF-8 in a log", []string{"classify", "--expected", good, "--observed", utf}, "bad.jsonl:1: invalid UTF-8"},
		{"a null result.json", []string{"report", runDir}, "result.json: no result"},
		{"a sweep.json without a sweep", []string{"report", sweepDir}, "sweep.json: sweep: no sweep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := execute(tc.args, &out, &errb)
			assert.Equal(t, 2, code, "stderr: %s", errb.String())
			assert.Contains(t, errb.String(), tc.want)
		})
	}
}
