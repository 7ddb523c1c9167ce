package reports

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
)

// writeRunDir saves a small comparison as `streamha run` does.
func writeRunDir(t *testing.T) string {
	t.Helper()
	cmp := compareRun(t)
	dir := t.TempDir()
	require.NoError(t, WriteJSON(filepath.Join(dir, ResultFile), cmp.Result))
	require.NoError(t, WriteTrace(filepath.Join(dir, ReferenceFile), cmp.Reference))
	for i, run := range cmp.Result.Runs {
		require.NoError(t, WriteTrace(TraceFile(dir, run.Strategy), cmp.Runs[i].Trace))
	}
	return dir
}

// editDeliver rewrites the t of the first (or last) deliver line of path.
func editDeliver(t *testing.T, path string, last bool, newT string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, `"kind":"deliver"`) {
			at = i
			if !last {
				break
			}
		}
	}
	require.GreaterOrEqual(t, at, 0)
	lines[at] = regexp.MustCompile(`^\{"t":-?\d+`).ReplaceAllString(lines[at], `{"t":`+newT)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
	return at + 1
}

// TestDamagedRunDirectories holds the run-directory cases of issue 26: each
// is a *ReadError naming the file and the line or field — never a panic
// (the figures indexed arrays by these times) and never an empty report.
func TestDamagedRunDirectories(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns what the error must say
	}{
		{"a deliver event at t -5e9 (a panic in the throughput figure)", func(t *testing.T, dir string) string {
			n := editDeliver(t, TraceFile(dir, "amnesia"), false, "-5000000000")
			return "trace-amnesia.jsonl:" + itoa(n) + ": deliver event: t: -5000000000 ns is out of range"
		}},
		{"the last delivery at t -9e18 (a negative bin count)", func(t *testing.T, dir string) string {
			n := editDeliver(t, TraceFile(dir, "sweeptest"), true, "-9000000000000000000")
			return "trace-sweeptest.jsonl:" + itoa(n) + ": deliver event: t:"
		}},
		{"result.json a symbolic link to /dev/zero", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			p := filepath.Join(dir, ResultFile)
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("/dev/zero", p))
			return "result.json: not a regular file"
		}},
		{"a trace a symbolic link to /dev/zero", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			p := TraceFile(dir, "amnesia")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("/dev/zero", p))
			return "trace-amnesia.jsonl: not a regular file"
		}},
		{"result.json null", func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ResultFile), []byte("null\n"), 0o644))
			return "result.json: no result"
		}},
		{"result.json {}", func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ResultFile), []byte("{}\n"), 0o644))
			return "result.json: runs: no run"
		}},
		{"a strategy named ../../x", func(t *testing.T, dir string) string {
			editResult(t, dir, func(r *metrics.Result) { r.Runs[0].Strategy = "../../x" })
			return `result.json: runs[0].strategy: "../../x" is not a strategy name`
		}},
		{"a strategy given twice", func(t *testing.T, dir string) string {
			editResult(t, dir, func(r *metrics.Result) { r.Runs[1].Strategy = r.Runs[0].Strategy })
			return "result.json: runs[1].strategy: amnesia appears twice"
		}},
		{"recovery_ms 1e300", func(t *testing.T, dir string) string {
			editResult(t, dir, func(r *metrics.Result) { v := 1e300; r.Runs[0].Recovery.RecoveryMs = &v })
			return "result.json: runs[0].recovery.recovery_ms: 1e+300 is out of range"
		}},
		{"a string where a count belongs", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, ResultFile)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b = regexp.MustCompile(`"missing": \d+`).ReplaceAll(b, []byte(`"missing": "many"`))
			require.NoError(t, os.WriteFile(p, b, 0o644))
			return "result.json: line "
		}},
		{"data after the result", func(t *testing.T, dir string) string {
			f, err := os.OpenFile(filepath.Join(dir, ResultFile), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("{}\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return "data after the JSON value"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRunDir(t)
			want := tc.damage(t, dir)
			err := RenderRunDir(dir, nil)
			var re *ReadError
			require.True(t, errors.As(err, &re), "want a *ReadError (exit status 2), got %v", err)
			assert.Contains(t, err.Error(), want)
			assert.NoFileExists(t, filepath.Join(dir, "report.html"), "no report from a damaged directory")
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func editResult(t *testing.T, dir string, f func(*metrics.Result)) {
	t.Helper()
	p := filepath.Join(dir, ResultFile)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var r metrics.Result
	require.NoError(t, json.Unmarshal(b, &r))
	f(&r)
	require.NoError(t, WriteJSON(p, &r))
}

// writeSweepDir saves synthPoints as a sweep directory.
func writeSweepDir(t *testing.T) (string, *experiment.Sweep) {
	t.Helper()
	sw, ps := synthPoints()
	dir := t.TempDir()
	require.NoError(t, WriteJSON(filepath.Join(dir, SweepMetaFile), &SweepMeta{Hash: sw.Hash(), Sweep: sw}))
	require.NoError(t, WritePoints(filepath.Join(dir, SweepPointsFile), ps))
	return dir, sw
}

// TestDamagedSweepDirectories holds the sweep-directory cases of issue 26.
func TestDamagedSweepDirectories(t *testing.T) {
	pointsLines := func(t *testing.T, dir string) []string {
		b, err := os.ReadFile(filepath.Join(dir, SweepPointsFile))
		require.NoError(t, err)
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	writeLines := func(t *testing.T, dir string, ls []string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, SweepPointsFile), []byte(strings.Join(ls, "\n")+"\n"), 0o644))
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string) string
	}{
		{"recovery_ms 1e300 (gonum: illegal range)", func(t *testing.T, dir string) string {
			ls := pointsLines(t, dir)
			ls[2] = regexp.MustCompile(`"recovery_ms":[0-9.e+]+`).ReplaceAllString(ls[2], `"recovery_ms":1e300`)
			writeLines(t, dir, ls)
			return "points.jsonl:3: result.runs[0].recovery.recovery_ms: 1e+300 is out of range"
		}},
		{"a duplicated point (counted as an extra seed)", func(t *testing.T, dir string) string {
			ls := pointsLines(t, dir)
			writeLines(t, dir, append(ls, ls[0]))
			return "points.jsonl:" + itoa(len(ls)+1) + ": index: point 0 is also on line 1"
		}},
		{"a point outside the sweep", func(t *testing.T, dir string) string {
			ls := pointsLines(t, dir)
			ls[0] = strings.Replace(ls[0], `"index":0`, `"index":9999`, 1)
			writeLines(t, dir, ls)
			return "points.jsonl:1: index: 9999 is not a point of the sweep"
		}},
		{"a point whose seed is not its index's", func(t *testing.T, dir string) string {
			ls := pointsLines(t, dir)
			ls[0] = strings.Replace(ls[0], `"seed":1`, `"seed":77`, 1)
			writeLines(t, dir, ls)
			return "points.jsonl:1: index: point 0 has setting"
		}},
		{"a point with a null result", func(t *testing.T, dir string) string {
			writeLines(t, dir, []string{`{"index":0,"setting":0,"values":["50ms"],"seed":1,"result":null}`})
			return "points.jsonl:1: not a sweep point"
		}},
		{"a point with an empty result", func(t *testing.T, dir string) string {
			writeLines(t, dir, []string{`{"index":0,"setting":0,"values":["50ms"],"seed":1,"result":{}}`})
			return "points.jsonl:1: result.runs: no run"
		}},
		{"points.jsonl a symbolic link to /dev/zero", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			p := filepath.Join(dir, SweepPointsFile)
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("/dev/zero", p))
			return "points.jsonl: not a regular file"
		}},
		{"sweep.json null", func(t *testing.T, dir string) string {
			require.NoError(t, os.WriteFile(filepath.Join(dir, SweepMetaFile), []byte("null"), 0o644))
			return "sweep.json: sweep: no sweep"
		}},
		{"a sweep strategy named ../x", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, SweepMetaFile)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"a"`, `"../x"`, 1)), 0o644))
			return `sweep.json: sweep.strategies[0]: "../x" is not a strategy name`
		}},
		{"a corrupt line", func(t *testing.T, dir string) string {
			ls := pointsLines(t, dir)
			ls[1] = ls[1][:len(ls[1])/2]
			writeLines(t, dir, ls)
			return "points.jsonl:2: not a sweep point"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := writeSweepDir(t)
			_, _, err := LoadSweepDir(dir)
			require.NoError(t, err, "the undamaged directory loads")
			want := tc.damage(t, dir)
			_, _, err = LoadSweepDir(dir)
			var re *ReadError
			require.True(t, errors.As(err, &re), "want a *ReadError (exit status 2), got %v", err)
			assert.Contains(t, err.Error(), want)
		})
	}
}
