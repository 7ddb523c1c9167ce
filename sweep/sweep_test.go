package sweep

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/reports"

	_ "github.com/streamha/streamha/strategies/all"
)

// sweepExperiment is short: a windowed average over 5 s with a crash of
// the window's node at 2.6 s.
const sweepExperiment = `name: sweep-test
seed: 3
duration: 5s
drain: 2s
source: {rate: 300, keys: 3}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{sliding: {size: 1s, slide: 500ms, agg: avg}}]}
spares: 1
faults:
  - {at: 2.6s, crash: B}
`

// testSweep sweeps an experiment parameter and a strategy parameter that
// only passive standby declares, over two seeds.
func testSweep(t *testing.T) *experiment.Sweep {
	t.Helper()
	sw, err := experiment.NewSweep("t", sweepExperiment, []experiment.SweepParam{
		{Name: "detector.timeout", Values: []string{"100ms", "400ms"}},
		{Name: "checkpoint_interval", Values: []string{"150ms"}},
	}, []string{"amnesia", "passive-standby"}, 2, nil)
	require.NoError(t, err)
	return sw
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// csvColumns reads a CSV file with a header: its rows, and the index of
// each column by name.
func csvColumns(t *testing.T, path string) (rows [][]string, col map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, all, "%s has a header", path)
	col = map[string]int{}
	for i, name := range all[0] {
		col[name] = i
	}
	return all[1:], col
}

func TestSweepPointsAndParams(t *testing.T) {
	sw := testSweep(t)
	assert.Equal(t, []string{experiment.ParamExperiment, experiment.ParamStrategy}, sw.Kinds)
	assert.Equal(t, 4, sw.Len())
	assert.Equal(t, []uint64{3, 4}, sw.Seeds)
	pt := sw.Point(3) // setting 1 = (400ms, 2), seed index 1
	assert.Equal(t, []string{"400ms", "150ms"}, pt.Values)
	assert.Equal(t, uint64(4), pt.Seed)

	p, err := RunPoint(sw, 3)
	require.NoError(t, err)
	require.Len(t, p.Result.Runs, 2)
	assert.Empty(t, p.Result.Runs[0].Params["checkpoint_interval"], "amnesia does not declare checkpoint_interval and runs unchanged")
	assert.Equal(t, "150ms", p.Result.Runs[1].Params["checkpoint_interval"])
	assert.Equal(t, uint64(4), p.Result.Seed)
	// A longer detector timeout delays detection.
	q, err := RunPoint(sw, 1)
	require.NoError(t, err)
	require.NotNil(t, p.Result.Runs[0].Recovery.DetectionMs)
	require.NotNil(t, q.Result.Runs[0].Recovery.DetectionMs)
	assert.Greater(t, *p.Result.Runs[0].Recovery.DetectionMs, *q.Result.Runs[0].Recovery.DetectionMs+200)
	assert.Equal(t, "gap", p.Result.Runs[0].Recovery.Type)
}

func TestSweepIdenticalWhateverWorkersAndShards(t *testing.T) {
	sw := testSweep(t)
	ctx := context.Background()
	root := t.TempDir()
	one, four := filepath.Join(root, "w1"), filepath.Join(root, "w4")
	p1, err := Run(ctx, one, sw, Options{Workers: 1})
	require.NoError(t, err)
	p4, err := Run(ctx, four, sw, Options{Workers: 4})
	require.NoError(t, err)
	require.Len(t, p1, sw.Len())
	assert.Equal(t, p1, p4)
	whole := readFile(t, filepath.Join(one, reports.SweepPointsFile))
	assert.Equal(t, whole, readFile(t, filepath.Join(four, reports.SweepPointsFile)))

	var shards []string
	for i := range 3 {
		d := filepath.Join(root, "s", string(rune('0'+i)))
		ps, err := Run(ctx, d, sw, Options{Workers: 2, Shard: i, Shards: 3})
		require.NoError(t, err)
		assert.Len(t, ps, len(sw.Shard(i, 3)))
		assert.NotEmpty(t, ps)
		shards = append(shards, d)
	}
	merged := filepath.Join(root, "merged")
	_, ps, missing, err := Merge(merged, shards)
	require.NoError(t, err)
	assert.Zero(t, missing)
	assert.Equal(t, p1, ps)
	assert.Equal(t, whole, readFile(t, filepath.Join(merged, reports.SweepPointsFile)))

	// A partial merge says how many points are missing.
	_, _, missing, err = Merge(filepath.Join(root, "partial"), shards[:2])
	require.NoError(t, err)
	assert.Equal(t, len(sw.Shard(2, 3)), missing)
}

func TestSweepResumes(t *testing.T) {
	sw := testSweep(t)
	dir := t.TempDir()
	full, err := Run(context.Background(), dir, sw, Options{Workers: 2})
	require.NoError(t, err)
	path := filepath.Join(dir, reports.SweepPointsFile)
	whole := readFile(t, path)
	// Interrupt: keep two whole lines and part of the third.
	lines, cut := 0, 0
	for i, c := range whole {
		if c == '\n' {
			lines++
			if lines == 2 {
				cut = i + 1
				break
			}
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(whole[:cut+40]), 0o644))
	var firstDone = -1
	again, err := Run(context.Background(), dir, sw, Options{Workers: 2, Progress: func(done, total int) {
		if firstDone < 0 {
			firstDone = done
		}
		assert.Equal(t, sw.Len(), total)
	}})
	require.NoError(t, err)
	assert.Equal(t, 2, firstDone, "the two complete points are not run again")
	assert.Equal(t, full, again)
	assert.Equal(t, whole, readFile(t, path))

	// A different sweep refuses the directory.
	other, err := experiment.NewSweep("t", sweepExperiment, []experiment.SweepParam{{Name: "source.rate", Values: []string{"300"}}}, []string{"amnesia"}, 1, nil)
	require.NoError(t, err)
	_, err = Run(context.Background(), dir, other, Options{Workers: 1})
	assert.ErrorIs(t, err, reports.ErrSweepMismatch)
	_, _, _, err = Merge(filepath.Join(t.TempDir(), "m"), []string{dir, writeOther(t, other)})
	assert.ErrorIs(t, err, reports.ErrSweepMismatch)
}

func writeOther(t *testing.T, sw *experiment.Sweep) string {
	d := t.TempDir()
	_, err := Run(context.Background(), d, sw, Options{Workers: 1})
	require.NoError(t, err)
	return d
}

func TestSweepCancelled(t *testing.T) {
	sw := testSweep(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, t.TempDir(), sw, Options{Workers: 2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted")
}

func TestSweepReportFiles(t *testing.T) {
	sw := testSweep(t)
	dir := t.TempDir()
	ps, err := Run(t.Context(), dir, sw, Options{Workers: 2, Command: "streamha sweep --param detector.timeout=100ms,400ms"})
	require.NoError(t, err)
	meta, loaded, err := reports.LoadSweepDir(dir)
	require.NoError(t, err)
	assert.Equal(t, ps, loaded)
	rep, err := Representative(sw)
	require.NoError(t, err)
	figs, err := reports.WriteSweepReport(dir, meta, loaded, rep)
	require.NoError(t, err)
	assert.Len(t, figs, 4+2*len(sw.Strategies)+1, "the sweep figures, two per strategy, and passive standby's checkpoint timeline")
	page := readFile(t, filepath.Join(dir, "report.html"))
	for _, bad := range []string{"http:", "https:", "<link", "src=", "<script", "url("} {
		assert.NotContains(t, strings.ToLower(page), bad, "the report is self-contained")
	}
	assert.Contains(t, page, "streamha sweep --param detector.timeout=100ms,400ms")
	for _, f := range []string{"recovery-vs-detector.timeout.png", "overhead-vs-detector.timeout.svg", "tradeoff-detector.timeout.png", "recovery-cdf.svg", "points.csv"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	rows := reports.Aggregate(ps)
	csvRows, col := csvColumns(t, filepath.Join(dir, "results.csv"))
	require.Len(t, csvRows, len(rows))
	for i, r := range rows {
		assert.Equal(t, r.Strategy, csvRows[i][col["strategy"]])
		assert.Equal(t, r.Values[0], csvRows[i][col["detector.timeout"]])
		got, err := strconv.ParseFloat(csvRows[i][col["recovery_ms"]], 64)
		require.NoError(t, err)
		assert.InDelta(t, r.RecoveryMs.Mean, got, 1e-9)
		assert.Equal(t, strconv.Itoa(r.Seeds), csvRows[i][col["seeds"]])
	}
	points, _ := csvColumns(t, filepath.Join(dir, "points.csv"))
	assert.Len(t, points, sw.Len()*len(sw.Strategies))
}
