package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExitCodes runs the built binary once per documented error class (the
// table in 'streamha --help' and README.md) and checks the exit status and
// that the message names what was wrong.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		return name
	}
	write("exp.yaml", sweepTestExperiment)
	write("syntax.yaml", "name: x\nseed: [1\n")
	write("field.yaml", "name: x\nsource: {rat: 10}\n")
	write("out.jsonl", `{"id":"a","value":1}`+"\n")
	write("lab1-answers.yaml", "q1: gap\n")
	write("lab1-blank.yaml", "# Answers for lab 1. One key per question.\nq1:\n")
	// A directory holding a run of another strategy.
	code, _, errOut := runBinary(t, dir, "run", "--config", "exp.yaml", "--strategy", "amnesia", "--out", "taken", "--quiet")
	require.Equal(t, 0, code, errOut)
	// A lab directory whose answers the student already filled in.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lab2"), 0o755))
	code, _, errOut = runBinary(t, filepath.Join(dir, "lab2"), "lab", "init", "2")
	require.Equal(t, 0, code, errOut)
	write("lab2/answers.yaml", "q1: gap\n")

	tests := []struct {
		class string
		args  []string
		code  int
		want  string // in stdout or stderr
	}{
		{"version flag", []string{"--version"}, 0, "go:"},
		{"version command", []string{"version"}, 0, "streamha "},
		{"help lists the codes", []string{"--help"}, 0, "130  interrupted"},
		{"classify whatever the type", []string{"classify", "--expected", "out.jsonl", "--observed", "out.jsonl"}, 0, "recovery: precise"},
		{"wrong lab answers", []string{"lab", "check", "1", "--answers", "lab1-answers.yaml"}, 1, "WRONG"},
		{"unknown command", []string{"runn"}, 2, `unknown command "runn" for "streamha" (did you mean run?)`},
		{"unknown subcommand", []string{"lab", "chek", "1"}, 2, `unknown command "chek" for "streamha lab"`},
		{"unknown flag", []string{"run", "--bogus"}, 2, "unknown flag: --bogus"},
		{"unexpected argument", []string{"run", "extra"}, 2, `unknown command "extra"`},
		{"bad flag value", []string{"run", "--seed", "x"}, 2, "--seed"},
		{"unknown strategy", []string{"run", "--strategy", "nope", "--no-out"}, 2, `unknown strategy "nope"`},
		{"unknown host", []string{"node", "--host", "Q", "--strategy", "amnesia"}, 2, `--host: "Q" is not a host`},
		{"unknown lab", []string{"lab", "show", "9"}, 2, "unknown lab 9"},
		{"unknown example", []string{"examples", "nope"}, 2, `unknown example "nope"`},
		{"missing experiment file", []string{"run", "--config", "nowhere.yaml", "--no-out"}, 2, "nowhere.yaml"},
		{"YAML syntax error", []string{"run", "--config", "syntax.yaml", "--no-out"}, 2, "syntax.yaml"},
		{"unknown field", []string{"run", "--config", "field.yaml", "--no-out"}, 2, "rat"},
		{"unreadable classify input", []string{"classify", "--expected", "nowhere.jsonl", "--observed", "out.jsonl"}, 2, "nowhere.jsonl"},
		{"no answers file", []string{"lab", "check", "1"}, 2, "streamha lab init 1"},
		{"another lab's answers", []string{"lab", "check", "2", "--answers", "lab1-blank.yaml"}, 2, "holds the answers of lab 1"},
		{"out holds a different run", []string{"run", "--config", "exp.yaml", "--strategy", "passive-standby", "--out", "taken", "--quiet"}, 2, "holds a different run"},
		{"lab init over filled answers", []string{"lab", "init", "2", "lab2"}, 2, "--force"},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			code, out, errOut := runBinary(t, dir, tt.args...)
			assert.Equal(t, tt.code, code, "streamha %s\n%s%s", strings.Join(tt.args, " "), out, errOut)
			assert.Contains(t, out+errOut, tt.want)
		})
	}
}

// TestInterruptedSweepExits130AndKeepsPoints sends SIGINT (as Ctrl-C
// does) to a sweep once its first point is written: the exit status is
// 130, the message names the directory and the finished points stay there
// (TestSweepAndReportCommands shows a sweep resuming from them).
func TestInterruptedSweepExits130AndKeepsPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(sweepTestExperiment), 0o644))
	var rates []string
	for r := 100; r < 100+400; r++ {
		rates = append(rates, strconv.Itoa(r))
	}
	args := []string{"sweep", "--config", "exp.yaml", "--strategy", "amnesia", "--workers", "1", "--no-progress",
		"--no-report", "--param", "source.rate=" + strings.Join(rates, ","), "--out", "sw"}
	cmd := exec.Command(streamhaBinary(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	points := filepath.Join(dir, "sw", "points.jsonl")
	// Wait for the first finished point (an event, not a duration; the
	// deadline only keeps a broken binary from hanging the test).
	deadline := time.Now().Add(2 * time.Minute)
	for countLines(points) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Positive(t, countLines(points), "no point finished")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the sweep finished 400 points before the interrupt: %s", out.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "interrupted: the finished points are kept in sw")
	kept := countLines(points)
	assert.Positive(t, kept)
	assert.Less(t, kept, len(rates))
}

// TestInterruptedClusterExits130 sends SIGINT to a cluster run once it
// has started: every node process is stopped, the exit status is 130 and
// the message names the directory that keeps the partial traces.
func TestInterruptedClusterExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary and starts node processes: skipped with -short")
	}
	dir := t.TempDir()
	cmd := exec.Command(streamhaBinary(t), "cluster", "--strategy", "amnesia", "--duration", "3s", "--no-baseline", "--quiet", "--out", "cl")
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	started := filepath.Join(dir, "cl", "experiment.yaml")
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.FileExists(t, started, "the cluster run never started")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the run finished before the interrupt: %s", out.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "interrupted: every node process was stopped; the partial traces are kept in cl")
}

// TestInterruptedRunExits130 sends SIGINT to a long simulated run once
// its first strategy's trace is written: the exit status is 130 and the
// message names the directory that keeps the finished traces.
func TestInterruptedRunExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the streamha binary: skipped with -short")
	}
	dir := t.TempDir()
	def, err := os.ReadFile(filepath.Join("..", "..", "examples", "default.yaml"))
	require.NoError(t, err)
	long := strings.Replace(string(def), "\nduration: 20s ", "\nduration: 300s ", 1)
	require.NotEqual(t, string(def), long)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "long.yaml"), []byte(long), 0o644))
	cmd := exec.Command(streamhaBinary(t), "run", "--config", "long.yaml", "--out", "lr", "--quiet")
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(2 * time.Minute)
	var traces []string
	for len(traces) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		traces, _ = filepath.Glob(filepath.Join(dir, "lr", "trace-*.jsonl"))
	}
	require.NotEmpty(t, traces, "no strategy finished")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the run finished before the interrupt: %s", out.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "interrupted: the traces of the strategies finished so far are kept in lr")
	assert.NoFileExists(t, filepath.Join(dir, "lr", "result.json"))
}
