package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSameCommandTwiceKeepsBothRuns: without --out, two identical runs in
// the same second get two directories, and latest points at the second.
func TestSameCommandTwiceKeepsBothRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	args := []string{"run", "--strategy", "amnesia", "--quiet"}
	code, out1, errOut := runCLI(t, args...)
	require.Equal(t, 0, code, errOut)
	code, out2, errOut := runCLI(t, args...)
	require.Equal(t, 0, code, errOut)
	dirs, err := filepath.Glob(filepath.Join(outRoot, "default-42-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 2)
	for _, d := range dirs {
		assert.FileExists(t, filepath.Join(d, "result.json"))
	}
	assert.Contains(t, out1, "results written to "+dirs[0])
	assert.Contains(t, out2, "results written to "+dirs[1])
	target, err := os.Readlink(filepath.Join(outRoot, latestLink))
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(dirs[1]), target)
	// The two results are identical: the time is only in the name.
	a, _ := os.ReadFile(filepath.Join(dirs[0], "result.json"))
	b, _ := os.ReadFile(filepath.Join(dirs[1], "result.json"))
	assert.Equal(t, string(a), string(b))
}

func TestNewStampedDirNumbersCollisions(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var got []string
	for range 3 {
		d, err := newStampedDir(root, "exp-7", now)
		require.NoError(t, err)
		got = append(got, filepath.Base(d))
	}
	assert.Equal(t, []string{"exp-7-20260102-030405", "exp-7-20260102-030405-2", "exp-7-20260102-030405-3"}, got)
}

// TestOutDirNeverMixesRuns covers every case of an explicit --out.
func TestOutDirNeverMixesRuns(t *testing.T) {
	simA := runIdentity{Mode: "sim", Fingerprint: "a", Command: "streamha run --strategy amnesia"}
	simB := runIdentity{Mode: "sim", Fingerprint: "b", Command: "streamha run --strategy passive-standby"}
	real := runIdentity{Mode: "cluster", Fingerprint: "a", Command: "streamha cluster"}
	tests := []struct {
		name         string
		prev         *runIdentity // marker of the earlier run; nil: none
		files        []string     // files in the directory beforehand
		id           runIdentity
		reproducible bool
		force        bool
		wantErr      string // "" = accepted, and the directory is then empty but for the marker
	}{
		{name: "new directory", id: simA, reproducible: true},
		{name: "empty directory", files: []string{}, id: simA, reproducible: true},
		{name: "same simulated run", prev: &simA, files: []string{"result.json", "trace-amnesia.jsonl"}, id: simA, reproducible: true},
		{name: "different simulated run", prev: &simA, files: []string{"result.json"}, id: simB, reproducible: true, wantErr: "holds a different run (streamha run --strategy amnesia)"},
		{name: "different run, forced", prev: &simA, files: []string{"result.json", "trace-amnesia.jsonl"}, id: simB, reproducible: true, force: true},
		{name: "real run again", prev: &real, files: []string{"result.json"}, id: real, wantErr: "cannot be reproduced"},
		{name: "real run, forced", prev: &real, files: []string{"result.json"}, id: real, force: true},
		{name: "unmarked old run", files: []string{"result.json", "trace-amnesia.jsonl"}, id: simA, reproducible: true, wantErr: "holds a different run"},
		{name: "not a run", files: []string{"thesis.tex"}, id: simA, reproducible: true, force: true, wantErr: "not a streamha run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if tt.files != nil || tt.prev != nil {
				require.NoError(t, os.MkdirAll(dir, 0o755))
			}
			if tt.prev != nil {
				require.NoError(t, writeMarker(dir, *tt.prev))
			}
			for _, f := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644))
			}
			got, err := prepareOutDir(outDirOptions{Out: dir, Force: tt.force, Reproducible: tt.reproducible}, tt.id)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, exitUsage, exitCode(err))
				assert.Contains(t, err.Error(), tt.wantErr)
				for _, f := range tt.files {
					assert.FileExists(t, filepath.Join(dir, f), "a refused directory is left as it was")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, dir, got)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "only the new run's marker is left")
			id, ok := readMarker(dir)
			require.True(t, ok)
			assert.Equal(t, tt.id, id)
		})
	}
}

func TestRemoveIfUnusedKeepsAnyOutput(t *testing.T) {
	empty, used := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, d := range []string{empty, used} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, writeMarker(d, runIdentity{Mode: "sim", Fingerprint: "f"}))
	}
	require.NoError(t, os.WriteFile(filepath.Join(used, "trace-amnesia.jsonl"), nil, 0o644))
	removeIfUnused(empty)
	removeIfUnused(used)
	assert.NoDirExists(t, empty)
	assert.FileExists(t, filepath.Join(used, "trace-amnesia.jsonl"))
}

// TestSweepsGetTheirOwnDefaultDirectories: after one sweep, a different
// sweep with the default --out runs in its own directory instead of
// failing with "directory holds a different sweep", and the same sweep
// again resumes in its directory with nothing left to run.
func TestSweepsGetTheirOwnDefaultDirectories(t *testing.T) {
	t.Chdir(t.TempDir())
	exp := writeFile(t, "exp.yaml", sweepTestExperiment)
	sweep := func(rates string) string {
		t.Helper()
		code, out, errOut := runCLI(t, "sweep", "--config", exp, "--strategy", "amnesia", "--param", "source.rate="+rates, "--no-progress", "--no-report")
		require.Equal(t, 0, code, errOut)
		return out
	}
	first := sweep("200,300")
	second := sweep("250")
	dirs, err := filepath.Glob(filepath.Join(outRoot, "sweep-small-*"))
	require.NoError(t, err)
	assert.Len(t, dirs, 2)
	assert.Contains(t, first, "2 points done")
	assert.Contains(t, second, "1 points done")
	target, err := os.Readlink(filepath.Join(outRoot, "latest-sweep"))
	require.NoError(t, err)
	assert.Contains(t, second, filepath.Join(outRoot, target))
	again := sweep("200,300")
	dirOf := func(out string) string {
		_, after, _ := strings.Cut(out, "→ ")
		d, _, _ := strings.Cut(after, "\n")
		return d
	}
	assert.Equal(t, dirOf(first), dirOf(again), "the same sweep resumes in its own directory")
	assert.NotEqual(t, dirOf(first), dirOf(second))
	dirs, err = filepath.Glob(filepath.Join(outRoot, "sweep-small-*"))
	require.NoError(t, err)
	assert.Len(t, dirs, 2)
}
