package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/streamha/streamha/ha/metrics"
)

// sketchAt is a strategy's sketch with a crash at 10.4 s, outputs once a
// second, and its detection, takeover and recovery at the given instants.
func sketchAt(name string, detect, takeover, recovered float64) runSketch {
	s := runSketch{strategy: name, faults: []fault{{t: 10.4, end: 10.4, what: "crash B"}}, end: 20}
	for x := 1.0; x <= 20; x++ {
		s.lat = append(s.lat, plotter.XY{X: x, Y: 4})
	}
	rec := (recovered - 10.4) * 1e3
	s.rec = metrics.Recovery{Type: "precise", RecoveryMs: &rec, EpisodeCount: 1,
		Episodes: []metrics.Episode{{StartMs: 10400, EndMs: 10400, RecoveryMs: &rec}}}
	s.marks = []mark{{markDetect, detect}, {markTakeover, takeover}, {markRecovered, recovered}}
	return s
}

// TestComparisonZoomKeepsMarksApart: the marks panel zooms into the
// episode so that marks 20 ms apart are further apart on the page than a
// mark is wide, while the latency panel shows outputs either side.
func TestComparisonZoomKeepsMarksApart(t *testing.T) {
	sks := []runSketch{sketchAt("amnesia", 10.60, 10.62, 10.64), sketchAt("passive-standby", 10.60, 10.62, 10.66)}
	eps := episodesOf(sks)
	require.Len(t, eps, 1)
	e := eps[0]
	assert.Less(t, e.from, 10.4)
	assert.Greater(t, e.to, 10.66)
	assert.LessOrEqual(t, e.latFrom, 9.0, "the latency panel reaches the output before the fault")
	assert.GreaterOrEqual(t, e.latTo, 11.0, "and the one after")

	p, err := compareMarks(e, sks)
	require.NoError(t, err)
	c := draw.NewCanvas(&recorder.Canvas{}, figW, 2*vg.Inch)
	strip := legendWidth(p)
	drawPlot(p, c, strip)
	dc := p.DataCanvas(draw.Crop(c, 0, -strip, 0, 0))
	tx, _ := p.Transforms(&dc)
	assert.Greater(t, tx(10.62)-tx(10.60), 2*vg.Points(3.5), "marks 20 ms apart do not touch")

	fig, ok, err := comparisonFigure(sks, nil)
	require.NoError(t, err)
	require.True(t, ok)
	svg := string(fig.SVG)
	for _, want := range []string{"amnesia", "passive-standby", "crash B at 10.40 s", "240.0 ms", "260.0 ms", "first detection"} {
		assert.True(t, strings.Contains(svg, want), "the figure says %q", want)
	}

	_, ok, err = comparisonFigure([]runSketch{{strategy: "amnesia"}}, nil)
	require.NoError(t, err)
	assert.False(t, ok, "no fault, no comparison")
}

// TestCostFigureNeverShowsNotRecoveredAsATime: a strategy that did not
// recover stands above a line marked "not recovered", where the axis has
// no number, labelled with the time it was observed.
func TestCostFigureNeverShowsNotRecoveredAsATime(t *testing.T) {
	rec, obs, one, two := 224.0, 9700.0, 1.0, 2.0
	r := &metrics.Result{Runs: []metrics.Run{
		{Strategy: "passive-standby", Recovery: metrics.Recovery{Type: "precise", RecoveryMs: &rec}, Overhead: metrics.Overhead{CPURatio: &one, BytesRatio: &two}},
		{Strategy: "upstream-backup", Recovery: metrics.Recovery{Type: metrics.NotRecoveredType, NotRecovered: true, ObservedMs: &obs}, Overhead: metrics.Overhead{CPURatio: &one, BytesRatio: &one}},
	}}
	fig, ok, err := costFigure(r)
	require.NoError(t, err)
	require.True(t, ok)
	svg := string(fig.SVG)
	assert.True(t, strings.Contains(svg, "upstream-backup: not recovered (&gt; 9.7 s)"), "labelled as not recovered")
	assert.True(t, strings.Contains(svg, "not recovered"))
	for _, tk := range (belowTicks{below: 250}).Ticks(0, 400) {
		assert.Less(t, tk.Value, 250.0, "no tick in the not-recovered band")
	}

	none := &metrics.Result{Runs: []metrics.Run{{Strategy: "amnesia"}}}
	_, ok, err = costFigure(none)
	require.NoError(t, err)
	assert.False(t, ok, "nothing failed: no recovery to set against cost")
}
