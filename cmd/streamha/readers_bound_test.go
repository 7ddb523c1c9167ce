package main

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadersRefuseEndlessAndHugeFiles runs every reader of a user file
// (classify, trace export, why, report, cluster --collect) on a FIFO with
// no writer, a link to /dev/zero and a 1 GiB log of one line: each
// refuses at once with an error naming the file, and the one-line log
// stops at the line bound, so the process allocates well under the file
// (asserted on the heap's total allocation, not on time).
func TestReadersRefuseEndlessAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.jsonl")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	huge := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // one line of NULs, sparse
	require.NoError(t, f.Close())
	runDir := filepath.Join(dir, "run")
	require.NoError(t, os.MkdirAll(runDir, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(runDir, "result.json"), 0o600))
	collect := filepath.Join(dir, "collect")
	require.NoError(t, os.MkdirAll(collect, 0o755))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(collect, "sink.trace.jsonl")))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"classify a FIFO", []string{"classify", "--expected", fifo, "--observed", fifo}, "not a regular file"},
			{"classify /dev/zero", []string{"classify", "--expected", zero, "--observed", zero}, "not a regular file"},
			{"trace export a FIFO", []string{"trace", "export", fifo}, "not a regular file"},
			{"trace export /dev/zero", []string{"trace", "export", zero}, "not a regular file"},
			{"why on a FIFO result", []string{"why", "--missing", "--run", runDir}, "not a regular file"},
			{"report on a FIFO result", []string{"report", runDir}, "not a regular file"},
			{"collect a /dev/zero trace", []string{"cluster", "--collect", collect, "--strategy", "none"}, "not a regular file"},
		} {
			code, _, errOut := runCLI(t, tc.args...)
			assert.NotEqual(t, 0, code, tc.name)
			assert.Contains(t, errOut, tc.want, tc.name)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, _, errOut := runCLI(t, "classify", "--expected", huge, "--observed", huge)
		runtime.ReadMemStats(&after)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "line longer than")
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(512<<20), "the 1 GiB line is not read past its 64 MiB bound")
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a reader blocked on a FIFO or read without end")
	}
}
