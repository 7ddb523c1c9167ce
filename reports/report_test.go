package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"

	// The model reads each strategy's own model from the registry.
	_ "github.com/streamha/streamha/strategies/all"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func compareRun(t *testing.T) *sim.Comparison {
	t.Helper()
	e, err := experiment.Parse([]byte(testExperiment), "test")
	require.NoError(t, err)
	cmp, err := sim.Compare(e, []string{"amnesia", "sweeptest"})
	require.NoError(t, err)
	return cmp
}

func traces(cmp *sim.Comparison) []*ha.Trace {
	out := make([]*ha.Trace, len(cmp.Runs))
	for i, r := range cmp.Runs {
		out[i] = r.Trace
	}
	return out
}

// synthPoints is a fixed sweep result: recovery grows with the interval
// for "b", "a" is flat; one seed of "a" did not recover, nor did every
// seed of "b" at the longest interval.
func synthPoints() (*experiment.Sweep, []PointResult) {
	sw := &experiment.Sweep{Name: "synth", Params: []experiment.SweepParam{{Name: "checkpoint_interval", Values: []string{"50ms", "100ms", "400ms"}}},
		Strategies: []string{"a", "b"}, Seeds: []uint64{1, 2, 3}, Kinds: []string{experiment.ParamStrategy}}
	var ps []PointResult
	for i := range sw.Len() {
		pt := sw.Point(i)
		f := func(v float64) *float64 { return &v }
		iv := []float64{50, 100, 400}[pt.Setting]
		ra := metrics.Run{Strategy: "a", Recovery: metrics.Recovery{Type: "gap", RecoveryMs: f(200 + float64(pt.Seed))},
			Overhead: metrics.Overhead{CPURatio: f(1), BytesRatio: f(1)}}
		if pt.Seed == 2 {
			ra.Recovery.RecoveryMs, ra.Recovery.NotRecovered, ra.Recovery.ObservedMs = nil, true, f(900)
		}
		rb := metrics.Run{Strategy: "b", Recovery: metrics.Recovery{Type: "precise", RecoveryMs: f(250 + iv/2 + 10*float64(pt.Seed))},
			Overhead: metrics.Overhead{CPURatio: f(1 + 5/iv), BytesRatio: f(1 + 50/iv), PeakQueueBytes: int64(iv * 100)}}
		if iv == 400 {
			rb.Recovery.RecoveryMs, rb.Recovery.NotRecovered, rb.Recovery.ObservedMs = nil, true, f(700)
		}
		ps = append(ps, PointResult{SweepPoint: pt, Result: &metrics.Result{Seed: pt.Seed, Runs: []metrics.Run{ra, rb}}})
	}
	return sw, ps
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./reports -update to create the golden files")
	assert.True(t, bytes.Equal(want, got), "%s differs from the golden file (go test ./reports -update after checking the change)", name)
}

func TestGoldenSVG(t *testing.T) {
	sw, ps := synthPoints()
	figs, err := SweepFigures(sw, ps)
	require.NoError(t, err)
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
		golden(t, f.Name+".svg", f.SVG)
	}
	png, err := figs[0].PNG()
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")))
	assert.Equal(t, []string{"recovery-vs-checkpoint_interval", "overhead-vs-checkpoint_interval", "tradeoff-checkpoint_interval", "recovery-cdf"}, names)

	cmp := compareRun(t)
	run := cmp.Runs[0]
	lf, err := LatencyFigure("latency", "amnesia", run.Trace, run.Run.Recovery)
	require.NoError(t, err)
	golden(t, "latency-amnesia.svg", lf.SVG)
	of, err := OutputFigure("outputs", "amnesia", cmp.Reference, run.Trace, run.Run.Recovery)
	require.NoError(t, err)
	golden(t, "outputs-amnesia.svg", of.SVG)
	assert.Contains(t, of.Title, "gap")

	// Rendering twice gives the same bytes.
	again, err := SweepFigures(sw, ps)
	require.NoError(t, err)
	for i := range figs {
		assert.Equal(t, figs[i].SVG, again[i].SVG)
	}
}

func TestRunReportFiles(t *testing.T) {
	cmp := compareRun(t)
	r := cmp.Result
	r.Command = "streamha run --seed 7"
	AddModelsFromConfig(r)
	require.NotNil(t, r.Runs[0].Model, "the model is computed from the recorded experiment")
	dir := t.TempDir()
	figs, err := WriteRunReport(dir, r, cmp.Reference, traces(cmp))
	require.NoError(t, err)
	require.Len(t, figs, 6)
	for _, f := range []string{"report.md", "report.html", "results.csv", "results.json", "latency-amnesia.png", "latency-amnesia.svg", "outputs-sweeptest.svg",
		CompareFigureName + ".svg", CompareFigureName + ".png", CostFigureName + ".svg"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}

	page := readFile(t, filepath.Join(dir, "report.html"))
	assertSelfContained(t, page)
	assert.Equal(t, 6, strings.Count(page, "<svg "))
	for _, want := range []string{"streamha run --seed 7", "seed 7", "name: small", "Model vs simulation", "gap"} {
		assert.Contains(t, page, want)
	}
	md := readFile(t, filepath.Join(dir, "report.md"))
	assert.Contains(t, md, "![amnesia: end-to-end latency and throughput over time](latency-amnesia.png)")
	assert.Contains(t, md, "| amnesia | gap |")
	if ex := r.Runs[0].Recovery.Explanations; len(ex) > 0 {
		assert.Contains(t, md, ex[0])
	}

	// CSV and JSON agree with the table and the result.
	rows := readCSV(t, filepath.Join(dir, "results.csv"))
	var js struct {
		Rows []map[string]any `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "results.json"))), &js))
	require.Len(t, rows, len(r.Runs))
	require.Len(t, js.Rows, len(r.Runs))
	for i, run := range r.Runs {
		assert.Equal(t, run.Strategy, rows[i]["strategy"])
		assert.Equal(t, run.Strategy, js.Rows[i]["strategy"])
		assert.Equal(t, RecoveryLabel(run.Recovery), rows[i]["recovery"])
		assert.Equal(t, strconv.Itoa(run.Recovery.Wrong), rows[i]["wrong"])
		assert.Equal(t, float64(run.Recovery.Wrong), js.Rows[i]["wrong"])
		rec, err := strconv.ParseFloat(rows[i]["recovery_ms"], 64)
		require.NoError(t, err)
		assert.Equal(t, *run.Recovery.RecoveryMs, rec)
		assert.Equal(t, *run.Recovery.RecoveryMs, js.Rows[i]["recovery_ms"])
		assert.Contains(t, md, "| "+run.Strategy+" | "+RecoveryLabel(run.Recovery)+" | "+rows[i]["missing"]+" | ")
	}

	// report re-renders from the saved directory identically.
	require.NoError(t, WriteJSON(filepath.Join(dir, ResultFile), r))
	require.NoError(t, WriteTrace(filepath.Join(dir, ReferenceFile), cmp.Reference))
	for i, run := range r.Runs {
		require.NoError(t, WriteTrace(TraceFile(dir, run.Strategy), cmp.Runs[i].Trace))
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "report.html")))
	require.NoError(t, RenderRunDir(dir, nil))
	assert.Equal(t, page, readFile(t, filepath.Join(dir, "report.html")))
}

func assertSelfContained(t *testing.T, page string) {
	t.Helper()
	low := strings.ToLower(page)
	for _, bad := range []string{"http:", "https:", "<link", "src=", "<script", "url("} {
		assert.NotContains(t, low, bad)
	}
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(readFile(t, path))).ReadAll()
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func TestPlotsSurviveBadData(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sw := &experiment.Sweep{Name: "bad", Params: []experiment.SweepParam{{Name: "rate", Values: []string{"0", "10", "1000"}}},
		Strategies: []string{"a"}, Seeds: []uint64{1}, Kinds: []string{experiment.ParamExperiment}}
	for _, tc := range []struct {
		name string
		rec  *float64
		cpu  *float64
	}{
		{"no recovery time", nil, nil},
		{"NaN", f(math.NaN()), f(math.NaN())},
		{"zero", f(0), f(0)},
		{"values", f(10), f(1.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps []PointResult
			for i := range sw.Len() {
				ps = append(ps, PointResult{SweepPoint: sw.Point(i), Result: &metrics.Result{Runs: []metrics.Run{{
					Strategy: "a", Recovery: metrics.Recovery{RecoveryMs: tc.rec}, Overhead: metrics.Overhead{CPURatio: tc.cpu}}}}})
			}
			figs, err := SweepFigures(sw, ps)
			require.NoError(t, err)
			require.Len(t, figs, 4)
			if tc.rec != nil && *tc.rec > 0 {
				// x = 0 cannot sit on the log axis (0, 10, 1000 span ≥ 8×): said, not drawn.
				assert.Contains(t, strings.Join(figs[0].Notes, ";"), "≤ 0 not drawn on the log axis")
			}
			if tc.rec == nil {
				assert.Contains(t, string(figs[0].SVG), "no data to plot")
			}
		})
	}
	t.Run("no points", func(t *testing.T) {
		figs, err := SweepFigures(sw, nil)
		require.NoError(t, err)
		assert.Contains(t, string(figs[0].SVG), "no data to plot")
	})
	t.Run("empty trace", func(t *testing.T) {
		lf, err := LatencyFigure("l", "a", nil, metrics.Recovery{})
		require.NoError(t, err)
		assert.Contains(t, string(lf.SVG), "no data to plot")
		of, err := OutputFigure("o", "a", nil, nil, metrics.Recovery{})
		require.NoError(t, err)
		assert.Contains(t, string(of.SVG), "no data to plot")
	})
	t.Run("clean series", func(t *testing.T) {
		ss, notes := cleanSeries([]series{{Name: "x", XY: plotter.XYs{{X: 1, Y: math.NaN()}, {X: 0, Y: 1}, {X: 2, Y: 0}, {X: 3, Y: 4}}}}, true, true)
		require.Len(t, ss, 1)
		assert.Len(t, ss[0].XY, 1)
		assert.Equal(t, []string{"1 point without a value not drawn", "2 points ≤ 0 not drawn on the log axis"}, notes)
	})
}

func TestModel(t *testing.T) {
	e, err := experiment.Parse([]byte(testExperiment), "test")
	require.NoError(t, err)
	unknown := Model(e, "someone-elses", nil)
	assert.Equal(t, map[string]float64{ModelStateBytes: unknown[ModelStateBytes], ModelDetectionMs: 225}, unknown,
		"an unknown strategy gets the detection delay alone")
	short := Model(e, "passive-standby", map[string]string{"checkpoint_interval": "50ms"})
	long := Model(e, "passive-standby", map[string]string{"checkpoint_interval": "800ms"})
	assert.Greater(t, long[ModelReplayMs], short[ModelReplayMs])
	assert.Greater(t, short[ModelCkptBytesPS], long[ModelCkptBytesPS])
	assert.Greater(t, long[ModelRecoveryMs], long[ModelDetectionMs])
	active := Model(e, "active-standby", nil)
	assert.Zero(t, active[ModelReplayMs])
	assert.InDelta(t, 2, active[ModelCPURatio], 0.3, "process pairs double the fragments' work")
	assert.Greater(t, unknown[ModelStateBytes], 0.0, "the tumbling window holds state")
}

// TestProcessCPUColumnOnlyForRealRuns: real runs measure the nodes'
// process CPU and the tables show its ratio beside cpu×; simulated runs
// keep the columns they always had.
func TestProcessCPUColumnOnlyForRealRuns(t *testing.T) {
	r := &metrics.Result{Experiment: "t", Mode: "sim", Runs: []metrics.Run{
		{Strategy: "amnesia", Overhead: metrics.Overhead{CPURatio: ptrF(1.01)}},
		{Strategy: "upstream-backup", Overhead: metrics.Overhead{CPURatio: ptrF(1.24)}},
	}}
	var b strings.Builder
	require.NoError(t, Table(&b, r))
	assert.NotContains(t, b.String(), "proc cpu×")
	assert.NotContains(t, RunTable(r).keys, "process_cpu_ratio")

	r.Mode = "cluster"
	r.Runs[0].Overhead.ProcessCPURatio = ptrF(0.98)
	r.Runs[1].Overhead.ProcessCPURatio = ptrF(1.07)
	b.Reset()
	require.NoError(t, Table(&b, r))
	lines := strings.Split(b.String(), "\n")
	var head, ub string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "strategy"):
			head = l
		case strings.Contains(l, "upstream-backup"):
			ub = l
		}
	}
	assert.Contains(t, head, "cpu×  proc cpu×")
	assert.Regexp(t, `1\.24 +1\.07`, ub, "cpu× then proc cpu×")
	tbl := RunTable(r)
	i := slices.Index(tbl.keys, "process_cpu_ratio")
	require.Equal(t, slices.Index(tbl.keys, "cpu_ratio")+1, i, "right after cpu×")
	assert.Equal(t, "proc cpu×", tbl.head[i])
	for row := range tbl.rows {
		require.Len(t, tbl.rows[row], len(tbl.keys))
	}
}

func ptrF(f float64) *float64 { return &f }

// TestRoundsNote: a table of overheads measured in repeated rounds says
// so, with each strategy's range; a single measurement adds nothing.
func TestRoundsNote(t *testing.T) {
	r := &metrics.Result{Experiment: "t", Mode: "cluster", Runs: []metrics.Run{
		{Strategy: "upstream-backup", Overhead: metrics.Overhead{CPURatio: ptrF(1.04), ProcessCPURatio: ptrF(0.98)}},
	}}
	var b strings.Builder
	require.NoError(t, Table(&b, r))
	assert.NotContains(t, b.String(), "rounds")
	assert.Empty(t, RoundsNote(r))

	r.Runs[0].Overhead.Rounds = 5
	r.Runs[0].Overhead.CPURatioRange = &metrics.Range{Min: 0.91, Max: 1.18}
	r.Runs[0].Overhead.ProcessCPURatioRange = &metrics.Range{Min: 0.9, Max: 1.1}
	b.Reset()
	require.NoError(t, Table(&b, r))
	assert.Contains(t, b.String(), "medians of 5 failure-free rounds")
	assert.Contains(t, b.String(), "upstream-backup cpu× 0.91–1.18, proc cpu× 0.90–1.10")
}

// TestRunDirAsItGoes: a run directory written strategy by strategy while
// the comparison runs (sim.CompareOptions.Faulty, as `streamha run` does)
// holds exactly the files WriteRunDir writes from a finished comparison.
func TestRunDirAsItGoes(t *testing.T) {
	whole := compareRun(t)
	AddModelsFromConfig(whole.Result)
	a := t.TempDir()
	require.NoError(t, WriteRunDir(a, whole.Result, whole.Reference, traces(whole)))

	e, err := experiment.Parse([]byte(testExperiment), "test")
	require.NoError(t, err)
	b := t.TempDir()
	rd, err := NewRunDir(b)
	require.NoError(t, err)
	cmp, err := sim.CompareWith(e, []string{"amnesia", "sweeptest"}, sim.CompareOptions{Faulty: rd.AddRun})
	require.NoError(t, err)
	AddModelsFromConfig(cmp.Result)
	require.NoError(t, rd.Finish(cmp.Result, cmp.Reference))

	files := func(dir string) map[string]string {
		out := map[string]string{}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, f := range ents {
			out[f.Name()] = readFile(t, filepath.Join(dir, f.Name()))
		}
		return out
	}
	fa, fb := files(a), files(b)
	require.Contains(t, fa, "trace-sweeptest.jsonl")
	require.Contains(t, fa, "outputs-amnesia.png")
	assert.Equal(t, slices.Sorted(maps.Keys(fa)), slices.Sorted(maps.Keys(fb)))
	for name, content := range fa {
		assert.True(t, content == fb[name], "%s differs", name)
	}
}
