package reports

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// sweepTestStrategy is amnesia with a declared parameter, to check that a
// strategy parameter reaches the strategies that declare it only.
type sweepTestStrategy struct{ strategies.Amnesia }

func (sweepTestStrategy) Name() string { return "sweeptest" }

func init() {
	strategies.Register(strategies.Info{
		Name: "sweeptest", Doc: "amnesia with a knob (reports tests)", Hidden: true,
		Params: []strategies.Param{{Name: "knob", Type: "int", Default: "1", Doc: "does nothing"}},
		New:    func(strategies.Params) (ha.Strategy, error) { return sweepTestStrategy{}, nil },
	})
}

// testExperiment is short: 6 s with a crash of B at 3.4 s.
const testExperiment = `name: small
seed: 7
duration: 6s
drain: 2s
source: {rate: 400, keys: 4, value: {dist: uniform, min: 0, max: 1}}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}]}
  - {name: B, ops: [{tumbling: {size: 500ms, agg: sum}}]}
spares: 1
detector: {heartbeat: 50ms, timeout: 200ms}
faults:
  - {at: 3.4s, crash: B}
`

func testSweep(t *testing.T) *sim.Sweep {
	t.Helper()
	sw, err := sim.NewSweep("t", testExperiment, []sim.SweepParam{
		{Name: "detector.timeout", Values: []string{"100ms", "400ms"}},
		{Name: "knob", Values: []string{"2"}},
	}, []string{"amnesia", "sweeptest"}, 2, nil)
	require.NoError(t, err)
	return sw
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestSweepPointsAndParams(t *testing.T) {
	sw := testSweep(t)
	assert.Equal(t, []string{sim.ParamExperiment, sim.ParamStrategy}, sw.Kinds)
	assert.Equal(t, 4, sw.Len())
	assert.Equal(t, []uint64{7, 8}, sw.Seeds)
	pt := sw.Point(3) // setting 1 = (400ms, 2), seed index 1
	assert.Equal(t, []string{"400ms", "2"}, pt.Values)
	assert.Equal(t, uint64(8), pt.Seed)

	p, err := RunPoint(sw, 3)
	require.NoError(t, err)
	require.Len(t, p.Result.Runs, 2)
	assert.Empty(t, p.Result.Runs[0].Params["knob"], "amnesia does not declare knob and runs unchanged")
	assert.Equal(t, "2", p.Result.Runs[1].Params["knob"])
	assert.Equal(t, uint64(8), p.Result.Seed)
	// A longer detector timeout delays detection.
	q, err := RunPoint(sw, 1)
	require.NoError(t, err)
	require.NotNil(t, p.Result.Runs[0].Recovery.DetectionMs)
	require.NotNil(t, q.Result.Runs[0].Recovery.DetectionMs)
	assert.Greater(t, *p.Result.Runs[0].Recovery.DetectionMs, *q.Result.Runs[0].Recovery.DetectionMs+200)
	assert.Equal(t, "gap", p.Result.Runs[0].Recovery.Type)
}

func TestSweepBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param sim.SweepParam
		want  string
	}{
		{"unknown field", sim.SweepParam{Name: "source.rte", Values: []string{"1"}}, "rte"},
		{"unknown bare name", sim.SweepParam{Name: "bogus", Values: []string{"1"}}, "unknown sweep parameter"},
		{"index out of range", sim.SweepParam{Name: "faults[3].at", Values: []string{"1s"}}, "out of range"},
		{"bad value", sim.SweepParam{Name: "source.rate", Values: []string{"fast"}}, "sweep point"},
		{"not a scalar", sim.SweepParam{Name: "source", Values: []string{"1"}}, "not a single value"},
		{"invalid strategy value", sim.SweepParam{Name: "knob", Values: []string{"-1"}}, "knob"},
		{"no values", sim.SweepParam{Name: "source.rate"}, "no values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.NewSweep("t", testExperiment, []sim.SweepParam{tc.param}, []string{"amnesia", "sweeptest"}, 1, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, experiment.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSweepIdenticalWhateverWorkersAndShards(t *testing.T) {
	sw := testSweep(t)
	ctx := context.Background()
	root := t.TempDir()
	one, four := filepath.Join(root, "w1"), filepath.Join(root, "w4")
	p1, err := RunSweep(ctx, one, sw, SweepOptions{Workers: 1})
	require.NoError(t, err)
	p4, err := RunSweep(ctx, four, sw, SweepOptions{Workers: 4})
	require.NoError(t, err)
	require.Len(t, p1, sw.Len())
	assert.Equal(t, p1, p4)
	whole := readFile(t, filepath.Join(one, SweepPointsFile))
	assert.Equal(t, whole, readFile(t, filepath.Join(four, SweepPointsFile)))

	var shards []string
	for i := range 3 {
		d := filepath.Join(root, "s", string(rune('0'+i)))
		ps, err := RunSweep(ctx, d, sw, SweepOptions{Workers: 2, Shard: i, Shards: 3})
		require.NoError(t, err)
		assert.Len(t, ps, len(sw.Shard(i, 3)))
		assert.NotEmpty(t, ps)
		shards = append(shards, d)
	}
	merged := filepath.Join(root, "merged")
	_, ps, missing, err := MergeSweeps(merged, shards)
	require.NoError(t, err)
	assert.Zero(t, missing)
	assert.Equal(t, p1, ps)
	assert.Equal(t, whole, readFile(t, filepath.Join(merged, SweepPointsFile)))

	// A partial merge says how many points are missing.
	_, _, missing, err = MergeSweeps(filepath.Join(root, "partial"), shards[:2])
	require.NoError(t, err)
	assert.Equal(t, len(sw.Shard(2, 3)), missing)
}

func TestSweepResumes(t *testing.T) {
	sw := testSweep(t)
	dir := t.TempDir()
	full, err := RunSweep(context.Background(), dir, sw, SweepOptions{Workers: 2})
	require.NoError(t, err)
	path := filepath.Join(dir, SweepPointsFile)
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
	again, err := RunSweep(context.Background(), dir, sw, SweepOptions{Workers: 2, Progress: func(done, total int) {
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
	other, err := sim.NewSweep("t", testExperiment, []sim.SweepParam{{Name: "source.rate", Values: []string{"300"}}}, []string{"amnesia"}, 1, nil)
	require.NoError(t, err)
	_, err = RunSweep(context.Background(), dir, other, SweepOptions{Workers: 1})
	assert.ErrorIs(t, err, ErrSweepMismatch)
	_, _, _, err = MergeSweeps(filepath.Join(t.TempDir(), "m"), []string{dir, writeOther(t, other)})
	assert.ErrorIs(t, err, ErrSweepMismatch)
}

func writeOther(t *testing.T, sw *sim.Sweep) string {
	d := t.TempDir()
	_, err := RunSweep(context.Background(), d, sw, SweepOptions{Workers: 1})
	require.NoError(t, err)
	return d
}

func TestSweepCancelled(t *testing.T) {
	sw := testSweep(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunSweep(ctx, t.TempDir(), sw, SweepOptions{Workers: 2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted")
}

func TestSetPath(t *testing.T) {
	for _, tc := range []struct{ path, value, want string }{
		{"source.rate", "900", "rate: 900"},
		{"faults[0].at", "2s", "at: 2s"},
		{"nodes[1].ops[0].tumbling.size", "250ms", "size: 250ms"},
		{"network.loss", "0.01", "loss: 0.01"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			sw, err := sim.NewSweep("t", testExperiment, []sim.SweepParam{{Name: tc.path, Values: []string{tc.value}}}, []string{"amnesia"}, 1, nil)
			require.NoError(t, err)
			e, err := sw.Experiment(sw.Point(0))
			require.NoError(t, err)
			text, err := yaml.Marshal(e)
			require.NoError(t, err)
			assert.Contains(t, string(text), tc.want)
		})
	}
}
