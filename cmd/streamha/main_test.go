package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestRunDefaultPrintsTableAndWritesResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "run", "--strategy", "amnesia", "--out", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "strategy")
	assert.Contains(t, out, "amnesia")
	assert.Contains(t, out, "gap")
	assert.Contains(t, out, "results written to "+dir)
	for _, f := range []string{"result.json", "trace-amnesia.jsonl", "trace-reference.jsonl"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

// TestRunWritesACPUProfile: --cpuprofile leaves a Go CPU profile (gzip),
// and a path that cannot be created is a usage error naming the flag.
func TestRunWritesACPUProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "run.pprof")
	code, _, errOut := runCLI(t, "run", "--strategy", "amnesia", "--no-out", "--quiet", "--cpuprofile", prof)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(prof)
	require.NoError(t, err)
	require.Greater(t, len(b), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, b[:2], "a pprof profile is gzip-compressed")

	code, _, errOut = runCLI(t, "run", "--no-out", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--cpuprofile")
}

func TestRunJSONIsTheResult(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "run", "--strategy", "amnesia", "--json", "--no-out", "--seed", "9")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Seed uint64 `json:"seed"`
		Mode string `json:"mode"`
		Runs []struct {
			Strategy string `json:"strategy"`
			Recovery struct {
				Type       string `json:"type"`
				LostInputs int64  `json:"lost_inputs"`
			} `json:"recovery"`
			Overhead map[string]any `json:"overhead"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, uint64(9), res.Seed)
	assert.Equal(t, "sim", res.Mode)
	require.Len(t, res.Runs, 1)
	assert.Equal(t, "gap", res.Runs[0].Recovery.Type)
	assert.Positive(t, res.Runs[0].Recovery.LostInputs)
	for _, k := range []string{"messages", "bytes", "cpu", "peak_queue", "messages_ratio", "bytes_ratio", "cpu_ratio"} {
		assert.Contains(t, res.Runs[0].Overhead, k)
	}
}

func TestRunSameSeedSameResultFile(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		code, _, errOut := runCLI(t, "run", "--strategy", "amnesia", "--out", d)
		require.Equal(t, 0, code, errOut)
	}
	ra, err := os.ReadFile(filepath.Join(a, "result.json"))
	require.NoError(t, err)
	rb, err := os.ReadFile(filepath.Join(b, "result.json"))
	require.NoError(t, err)
	require.Equal(t, ra, rb)
}

func TestBadInputExitsTwo(t *testing.T) {
	good := writeFile(t, "good.jsonl", `{"id":"a","value":1}`+"\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown strategy", []string{"run", "--strategy", "paxos", "--no-out"}, `unknown strategy "paxos"`},
		{"missing config", []string{"run", "--config", "/nonexistent/x.yaml", "--no-out"}, "x.yaml"},
		{"malformed config", []string{"run", "--no-out", "--config", writeFile(t, "bad.yaml", "nodes: [")}, "bad.yaml"},
		{"unknown field", []string{"run", "--no-out", "--config", writeFile(t, "f.yaml", "source: {rate: 1, keys: 1}\nnodez: []\n")}, "nodez"},
		{"negative duration", []string{"run", "--no-out", "--config", writeFile(t, "d.yaml", "duration: -2s\n")}, "negative"},
		{"unknown node in fault", []string{"run", "--no-out", "--config", writeFile(t, "n.yaml", "source: {rate: 10, keys: 1}\nnodes: [{name: A, ops: [{map: {}}]}]\nfaults: [{at: 1s, crash: Q}]\n")}, `unknown node "Q"`},
		{"unknown flag", []string{"run", "--frobnicate"}, "unknown flag"},
		{"stray argument", []string{"run", "extra"}, "unknown command"},
		{"overhead rounds below one", []string{"cluster", "--overhead-rounds", "0"}, "--overhead-rounds: must be at least 1, got 0"},
		{"overhead rounds without baseline", []string{"cluster", "--overhead-rounds", "3", "--no-baseline"}, "drop --no-baseline"},
		{"overhead rounds of collected traces", []string{"cluster", "--overhead-rounds", "3", "--collect", t.TempDir(), "--strategy", "amnesia"}, "--collect launches no runs"},
		{"netns with collected traces", []string{"cluster", "--netns", "--collect", t.TempDir(), "--strategy", "amnesia"}, "--netns: --collect launches no runs"},
		{"insecure with a secret", []string{"cluster", "--insecure", "--secret-file", writeFile(t, "secret", "a cluster secret\n")}, "--insecure: a cluster secret is set"},
		{"classify missing flags", []string{"classify"}, "--expected"},
		{"classify missing file", []string{"classify", "--expected", good, "--observed", "/nonexistent/o.jsonl"}, "o.jsonl"},
		{"classify bad line", []string{"classify", "--expected", good, "--observed", writeFile(t, "o.jsonl", `{"id":"a"}`+"\n{oops\n")}, "o.jsonl:2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			require.Equal(t, 2, code, errOut)
			require.Contains(t, errOut, tc.want)
			require.NotContains(t, errOut, "panic")
		})
	}
}

func TestClassifyCommand(t *testing.T) {
	exp := writeFile(t, "e.jsonl", `{"id":"w1","value":10,"n":5}`+"\n"+`{"id":"w2","value":20,"n":5}`+"\n")
	obs := writeFile(t, "o.jsonl", `{"id":"w1","value":10,"n":5,"t":1000}`+"\n"+`{"id":"w1","value":10,"n":5,"t":1500}`+"\n"+`{"id":"w2","value":20,"n":5,"t":2000}`+"\n")
	code, out, errOut := runCLI(t, "classify", "--expected", exp, "--observed", obs, "--json")
	require.Equal(t, 0, code, errOut)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "rollback", res["type"])
	assert.Equal(t, "repeating", res["subtype"])
	assert.EqualValues(t, 1, res["duplicates"])
	code, out, _ = runCLI(t, "classify", "--expected", exp, "--observed", exp)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "recovery: precise")
}

func TestStrategiesListsRegistry(t *testing.T) {
	code, out, _ := runCLI(t, "strategies")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "amnesia")
	assert.NotContains(t, out, "\nnone\n", "the no-HA baseline is hidden unless --all")
	_, out, _ = runCLI(t, "strategies", "--all")
	assert.Contains(t, out, "none")
}

func TestOperatorsListsTheLibrary(t *testing.T) {
	code, out, _ := runCLI(t, "operators")
	require.Equal(t, 0, code)
	for _, want := range []string{"tumbling (convergent-capable)", "union (arbitrary)", "running_sum (deterministic)", "hash_chain (deterministic)", "size", "value_gt"} {
		assert.Contains(t, out, want)
	}
}

// TestRunReportsStagesOfLongRuns: a run past runProgressAfter tells which
// stage it is in on stderr (stdout keeps only the table or the JSON);
// --quiet silences it. The default run is shorter than the real threshold.
//
// Not parallel, nor is TestReportRerendersARunDir: both set
// runProgressAfter, which the parallel tests read once every sequential
// test has ended.
func TestRunReportsStagesOfLongRuns(t *testing.T) {
	defer func(d time.Duration) { runProgressAfter = d }(runProgressAfter)
	runProgressAfter = 0
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "run", "--strategy", "amnesia,upstream-backup", "--out", dir, "--json")
	require.Equal(t, 0, code, errOut)
	for _, stage := range []string{"reference run", "amnesia: run with the faults", "amnesia: classifying",
		"amnesia: writing its trace and figures", "amnesia: failure-free run", "upstream-backup: run with the faults",
		"writing the reference trace and the report"} {
		assert.Contains(t, errOut, stage)
	}
	assert.FileExists(t, filepath.Join(dir, "trace-upstream-backup.jsonl"))
	assert.NotContains(t, out, "streamha:", "progress stays off stdout")
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), "stdout is still the JSON result")

	code, _, errOut = runCLI(t, "run", "--strategy", "amnesia", "--no-out", "--quiet")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
}

// TestRunKeepsNoFaultyTrace: `streamha run` drops each strategy's faulty
// trace once it is written (or, with --no-out, once it is classified), so
// a long experiment's memory does not grow with the number of strategies.
func TestRunKeepsNoFaultyTrace(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", t.TempDir()} {
		cmp, err := compareInto(experiment.Default(), []string{"amnesia", "upstream-backup"}, dir, nil, "streamha run")
		require.NoError(t, err)
		require.Len(t, cmp.Runs, 2)
		for _, r := range cmp.Runs {
			assert.Nil(t, r.Trace, "out %q: %s's trace was kept", dir, r.Run.Strategy)
		}
		if dir != "" {
			assert.FileExists(t, filepath.Join(dir, "trace-upstream-backup.jsonl"))
			assert.FileExists(t, filepath.Join(dir, "report.md"))
		}
	}
}

// TestReportRerendersARunDir: `streamha report DIR` rewrites a run
// directory's report and figures identically from its saved files, telling
// its stages on stderr when it is long (never with --quiet), and a damaged
// trace in it is a usage error naming the file.
func TestReportRerendersARunDir(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "run", "--strategy", "amnesia,upstream-backup", "--out", dir, "--quiet")
	require.Equal(t, 0, code, errOut)
	rendered := []string{"report.md", "report.html", "results.csv", "results.json",
		"latency-amnesia.svg", "outputs-upstream-backup.svg", "outputs-upstream-backup.png"}
	before := map[string][]byte{}
	for _, f := range rendered {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		before[f] = b
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
	defer func(d time.Duration) { runProgressAfter = d }(runProgressAfter)
	runProgressAfter = 0 // as if it were long: every stage is reported
	code, out, errOut := runCLI(t, "report", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "report written to")
	for _, f := range rendered {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(before[f], b), "%s differs after re-rendering", f)
	}
	for _, stage := range []string{"reading the reference trace", "amnesia: reading its trace",
		"upstream-backup: classifying its run and drawing its figures", "writing the report"} {
		assert.Contains(t, errOut, stage)
	}
	code, _, errOut = runCLI(t, "report", "--quiet", dir)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)

	trace := filepath.Join(dir, "trace-upstream-backup.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte("{\"t\":1,\"kind\":\"deliver\"\n garbage"), 0o644))
	code, _, errOut = runCLI(t, "report", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "trace-upstream-backup.jsonl")
}
