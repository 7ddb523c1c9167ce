package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sweepTestExperiment = `name: small
seed: 7
duration: 6s
drain: 2s
source: {rate: 300, keys: 4}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms}}]}
spares: 1
faults:
  - {at: 3.4s, crash: B}
`

func TestSweepAndReportCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp.yaml")
	require.NoError(t, os.WriteFile(exp, []byte(sweepTestExperiment), 0o644))
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := execute(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	base := []string{"sweep", "--config", exp, "--strategy", "amnesia", "--seeds", "2", "--param", "detector.timeout=100ms,300ms"}

	t.Run("bad parameters exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"sweep", "--config", exp, "--param", "source.rte=1", "--out", filepath.Join(dir, "x")},
			{"sweep", "--config", exp, "--param", "nope", "--out", filepath.Join(dir, "x")},
			{"sweep", "--config", exp, "--param", "source.rate=1", "--shard", "3/2", "--out", filepath.Join(dir, "x")},
			{"sweep", "--config", exp, "--out", filepath.Join(dir, "x")},
			{"report", filepath.Join(dir, "nothing-here")},
		} {
			code, _, stderr := run(args...)
			assert.Equal(t, 2, code, "%v: %s", args, stderr)
		}
	})

	whole := filepath.Join(dir, "whole")
	code, out, stderr := run(append(base, "--out", whole, "--workers", "2")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "report written to "+filepath.Join(whole, "report.html"))
	for _, f := range []string{"report.md", "report.html", "results.csv", "results.json", "recovery-vs-detector.timeout.png", "recovery-cdf.svg"} {
		assert.FileExists(t, filepath.Join(whole, f))
	}

	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(dir, "shard"+s[:1])
		code, out, stderr := run(append(base, "--out", d, "--shard", s, "--workers", "1")...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "streamha report merge")
		assert.NoFileExists(t, filepath.Join(d, "report.html"), "shards write points only")
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	code, out, stderr = run(append([]string{"report", "merge", "--out", merged}, shards...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "merged 4 points")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, read(filepath.Join(whole, "points.jsonl")), read(filepath.Join(merged, "points.jsonl")))
	assert.Equal(t, read(filepath.Join(whole, "results.csv")), read(filepath.Join(merged, "results.csv")))

	// report re-renders a sweep directory.
	require.NoError(t, os.Remove(filepath.Join(whole, "report.md")))
	code, _, stderr = run("report", whole)
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(whole, "report.md"))

	// Resuming into a directory of another sweep is refused.
	code, _, stderr = run("sweep", "--config", exp, "--strategy", "amnesia", "--param", "source.rate=200", "--out", whole)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "different sweep")
}

func TestRunWritesReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp.yaml")
	require.NoError(t, os.WriteFile(exp, []byte(sweepTestExperiment), 0o644))
	out := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, execute([]string{"run", "--config", exp, "--strategy", "amnesia", "--out", out}, &stdout, &stderr), stderr.String())
	for _, f := range []string{"report.md", "report.html", "results.csv", "results.json", "latency-amnesia.png", "outputs-amnesia.svg"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"model"`)
	stdout.Reset()
	require.Equal(t, 0, execute([]string{"report", out}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "report written to")
}
