package reports

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/streamha/streamha/strategies"
)

func labelled(ts []plot.Tick) []plot.Tick {
	var out []plot.Tick
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t)
		}
	}
	return out
}

func TestNiceTicksAreRound(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string // the labels, when a range has an obvious answer
	}{
		{0, 18, []string{"0", "5", "10", "15"}}, // not 0/9/18
		{0, 9.7, []string{"0", "2", "4", "6", "8"}},
		{0, 12000, []string{"0", "2000", "4000", "6000", "8000", "10000", "12000"}}, // not 1e+04
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0, 5000, []string{"0", "1000", "2000", "3000", "4000", "5000"}}, // not 5000.00
		{1.2, 1.9, nil},
		{340, 4198, nil},
		{-3, 7, nil},
		{0.001, 0.0013, nil},
		{9690, 9710, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.lo, "-", tc.hi), func(t *testing.T) {
			ts := labelled(niceTicks{}.Ticks(tc.lo, tc.hi))
			var labels []string
			for _, tk := range ts {
				labels = append(labels, tk.Label)
				assert.NotContains(t, tk.Label, "e", "no exponent")
				assert.GreaterOrEqual(t, tk.Value, tc.lo)
				assert.LessOrEqual(t, tk.Value, tc.hi)
				v, err := strconv.ParseFloat(tk.Label, 64)
				require.NoError(t, err)
				assert.InDelta(t, tk.Value, v, 1e-9*math.Max(1, math.Abs(v)), "the label is the value")
			}
			assert.GreaterOrEqual(t, len(ts), 3, labels)
			assert.LessOrEqual(t, len(ts), 9, labels)
			seen := map[string]bool{}
			for _, l := range labels {
				assert.False(t, seen[l], "label %s repeated in %v", l, labels)
				seen[l] = true
			}
			// Steps of 1, 2 or 5 × a power of ten.
			step := ts[1].Value - ts[0].Value
			m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
			assert.True(t, math.Abs(m-1) < 1e-6 || math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6, "step %g", step)
			if tc.want != nil {
				assert.Equal(t, tc.want, labels)
			}
		})
	}
}

func TestLogTicksLabelAtLeastThreeInPlainDecimals(t *testing.T) {
	for _, r := range [][2]float64{{3.4, 17}, {3.2, 80}, {1, 20000}, {0.002, 0.05}, {4, 6}} {
		ts := labelled(logTicks{}.Ticks(r[0], r[1]))
		assert.GreaterOrEqual(t, len(ts), 3, "%v", r)
		seen := map[string]bool{}
		for _, tk := range ts {
			assert.NotContains(t, tk.Label, "e", "%v: %s", r, tk.Label)
			assert.False(t, seen[tk.Label], "%v: %s repeated", r, tk.Label)
			seen[tk.Label] = true
		}
	}
	assert.Equal(t, "10000", logLabel(10000))
	assert.Equal(t, "0.3", logLabel(3*math.Pow(10, -1)))
}

func TestPlaceLabelsNeverOverlap(t *testing.T) {
	bounds := vg.Rectangle{Max: vg.Point{X: 400, Y: 300}}
	size := vg.Point{X: 40, Y: 8}
	glyph := vg.Length(3)
	tests := map[string][]vg.Point{
		"one spot": func() []vg.Point { // a strategy the parameter does not move
			var ps []vg.Point
			for range 10 {
				ps = append(ps, vg.Point{X: 200, Y: 150})
			}
			return ps
		}(),
		"a tight column": func() []vg.Point {
			var ps []vg.Point
			for i := range 12 {
				ps = append(ps, vg.Point{X: 200, Y: 100 + vg.Length(2*i)})
			}
			return ps
		}(),
		"in a corner": {{X: 399, Y: 299}, {X: 398, Y: 297}, {X: 399, Y: 295}, {X: 1, Y: 1}, {X: 2, Y: 2}},
	}
	for name, anchors := range tests {
		t.Run(name, func(t *testing.T) {
			sizes := make([]vg.Point, len(anchors))
			for i := range sizes {
				sizes[i] = size
			}
			boxes, placed := placeLabels(anchors, sizes, glyph, bounds)
			for i, b := range boxes {
				require.True(t, placed[i], "label %d found no room", i)
				assert.True(t, b.Min.X >= bounds.Min.X && b.Max.X <= bounds.Max.X && b.Min.Y >= bounds.Min.Y && b.Max.Y <= bounds.Max.Y, "label %d outside", i)
				for j := range i {
					assert.False(t, overlaps(b, boxes[j]), "labels %d and %d overlap: %v %v", i, j, b, boxes[j])
				}
				for _, a := range anchors {
					g := vg.Rectangle{Min: vg.Point{X: a.X - glyph, Y: a.Y - glyph}, Max: vg.Point{X: a.X + glyph, Y: a.Y + glyph}}
					assert.False(t, overlaps(b, g), "label %d covers a point", i)
				}
			}
		})
	}
}

// TestTradeoffLabelsDrawnApart renders the trade-off figure of a sweep in
// which two settings coincide and checks the label boxes drawn.
func TestTradeoffLabelsDrawnApart(t *testing.T) {
	p := newPlot("t", "CPU × no-HA", "recovery time (ms)", nil)
	ss := []series{
		{Name: "passive-standby", XY: plotter.XYs{{X: 1.04, Y: 1418}, {X: 1.04, Y: 1623}, {X: 1.04, Y: 1624}, {X: 1.03, Y: 2460}},
			Tags: []string{"50ms", "100ms", "200ms", "400ms"}},
		{Name: "active-standby", XY: plotter.XYs{{X: 1.05, Y: 1420}}, Tags: []string{"50ms…800ms"}},
	}
	p.X.Min, p.Y.Min = 0, 0
	require.NoError(t, addSeries(p, ss, strategyLook, false))
	// The same labels as addSeries places, kept to read what was drawn.
	tags := newPlacedLabels(vg.Points(3))
	for _, s := range ss {
		for i, tag := range s.Tags {
			tags.add(s.XY[i], tag, color.Black)
		}
	}
	p.Add(tags)
	_, err := single("tradeoff", "t", nil, p)
	require.NoError(t, err)
	require.Len(t, tags.drawn, 5, "every label drawn")
	// Both sets of labels avoid each other: 10 boxes, none overlapping.
	for i, b := range tags.drawn {
		for j := range i {
			assert.False(t, overlaps(b, tags.drawn[j]), "%s and %s overlap", tags.labels[i], tags.labels[j])
		}
	}
}

// TestLegendOutsideThePlottingArea draws a plot with a legend and checks
// that every legend text starts right of the plotting area.
func TestLegendOutsideThePlottingArea(t *testing.T) {
	p := newPlot("latency", "time (s)", "latency (ms)", nil)
	require.NoError(t, addSeries(p, []series{
		{Name: "amnesia", XY: plotter.XYs{{X: 0, Y: 1}, {X: 10, Y: 5}}},
		{Name: "upstream-backup", XY: plotter.XYs{{X: 0, Y: 2}, {X: 10, Y: 9}}},
	}, strategyLook, true))
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, figW, figH)
	strip := legendWidth(p)
	require.Positive(t, strip)
	drawPlot(p, c, strip)
	area := p.DataCanvas(draw.Crop(c, 0, -strip, 0, 0))
	found := 0
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok && (fs.String == "amnesia" || fs.String == "upstream-backup") {
			found++
			assert.GreaterOrEqual(t, fs.Point.X, area.Max.X, "%s is inside the plotting area", fs.String)
		}
	}
	assert.Equal(t, 2, found, "both legend entries drawn")
}

// colourHex is how an SVG figure writes a colour.
func colourHex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestOneColourPerStrategy checks the mapping from strategy to colour:
// the one each strategy registers, distinct for every registered strategy
// (those that register none included, while the palette lasts), and the
// same in a run's figures and in every sweep series of that strategy.
func TestOneColourPerStrategy(t *testing.T) {
	builtin := strategies.Registered()
	require.GreaterOrEqual(t, len(builtin), 6, "the whole registry (strategies/all)")
	require.LessOrEqual(t, len(builtin), len(plotutil.DefaultColors), "more strategies than colours")
	seen := map[string]string{}
	var fixed []int
	for _, n := range builtin {
		hex := colourHex(plotutil.Color(StrategyColor(n)))
		assert.Empty(t, seen[hex], "%s has the colour of %s", n, seen[hex])
		seen[hex] = n
		if info, err := strategies.Lookup(n); err == nil && info.Color > 0 {
			assert.Equal(t, info.Color-1, StrategyColor(n), "%s's registered colour", n)
			fixed = append(fixed, info.Color-1)
		}
	}
	assert.Equal(t, StrategyColor("not-registered"), StrategyColor("not-registered"), "stable for any name")
	assert.NotContains(t, fixed, StrategyColor("not-registered"), "never a colour a strategy registered")

	// The report's tables mark each strategy with the colour of its figures.
	for _, n := range builtin {
		assert.Contains(t, strategySwatch(n), colourHex(plotutil.Color(StrategyColor(n))), n)
	}

	names := []string{"amnesia (b=1)", "amnesia (b=2)", "passive-standby (b=1)", "passive-standby (b=2)"}
	look := sweepLook(names)
	for _, n := range names {
		st, _, _ := strings.Cut(n, " (")
		assert.Equal(t, StrategyColor(st), look(n).color, "%s in its strategy's colour", n)
	}
	assert.NotEqual(t, look(names[0]).variant, look(names[1]).variant, "series of one strategy told apart")

	// In a run, a strategy's latency figure is drawn in its colour and in
	// no other strategy's.
	cmp := compareRun(t)
	for _, run := range cmp.Runs {
		strategy := run.Run.Strategy
		fig, err := LatencyFigure("latency", strategy, run.Trace, run.Run.Recovery)
		require.NoError(t, err)
		svg := string(fig.SVG)
		own := colourHex(plotutil.Color(StrategyColor(strategy)))
		assert.Contains(t, svg, own, strategy)
		for _, other := range builtin {
			if other != strategy {
				assert.NotContains(t, svg, colourHex(plotutil.Color(StrategyColor(other))), "%s's figure uses %s's colour", strategy, other)
			}
		}
	}
}

func TestWrapText(t *testing.T) {
	assert.Equal(t, "not recovered at any seed,\nnot drawn: amnesia", wrapText("not recovered at any seed, not drawn: amnesia", 26))
	assert.Equal(t, "short", wrapText("short", 26))
	assert.Equal(t, "a-very-long-word\nb", wrapText("a-very-long-word b", 5))
}

// TestNotRecoveredStandApart: two strategies not recovered at the same
// settings and time get a cross each, side by side, and every "k/N"
// label is drawn, none over another or over a cross.
func TestNotRecoveredStandApart(t *testing.T) {
	assert.GreaterOrEqual(t, notRecoveredDodge, 2*vg.Points(5), "crosses of radius 5 pt a cross apart")
	p := newPlot("recovery", "interval", "recovery time (ms)", nil)
	xy := plotter.XYs{{X: 0, Y: 9700}, {X: 1, Y: 9700}, {X: 2, Y: 9700}, {X: 3, Y: 9700}, {X: 4, Y: 9700}}
	tags := []string{"5/5", "5/5", "5/5", "5/5", "5/5"}
	nr := []series{{Name: "amnesia", XY: xy, Tags: tags}, {Name: "upstream-backup", XY: xy, Tags: tags}}
	p.Y.Min = 0
	labels, err := addNotRecovered(p, nr, strategyLook)
	require.NoError(t, err)
	fig, err := single("recovery", "recovery", nil, p)
	require.NoError(t, err)
	require.Len(t, labels.drawn, 10, "every label drawn")
	assert.Greater(t, labels.dx[5]-labels.dx[0], vg.Length(0), "the second strategy's cross stands to the right")
	for i, b := range labels.drawn {
		for j := range i {
			assert.False(t, overlaps(b, labels.drawn[j]), "labels %d and %d overlap", i, j)
		}
	}
	assert.Contains(t, string(fig.SVG), colourHex(plotutil.Color(StrategyColor("upstream-backup"))))
}

// TestGridLegendKeepsOffTheEdge: panels side by side share a legend strip
// whose text ends inside the figure, a margin from its right edge.
func TestGridLegendKeepsOffTheEdge(t *testing.T) {
	a := newPlot("CPU", "CPU × no-HA", "recovery time (ms)", nil)
	b := newPlot("network", "bytes × no-HA", "recovery time (ms)", nil)
	ss := []series{{Name: "global-checkpoint", XY: plotter.XYs{{X: 1, Y: 2000}}}, {Name: "passive-standby", XY: plotter.XYs{{X: 1.5, Y: 1500}}}}
	require.NoError(t, addSeries(a, ss, strategyLook, false))
	require.NoError(t, addSeries(b, ss, strategyLook, false))
	a.Legend = plot.NewLegend()
	fig, err := grid("tradeoff", "t", nil, 12*vg.Inch, 5*vg.Inch, [][]*plot.Plot{{a, b}})
	require.NoError(t, err)
	rec := &recorder.Canvas{}
	fig.paint(draw.NewCanvas(rec, fig.w, fig.h))
	found := 0
	for _, act := range rec.Actions {
		fs, ok := act.(*recorder.FillString)
		if !ok || (fs.String != "global-checkpoint" && fs.String != "passive-standby") {
			continue
		}
		found++
		sty := text.Style{Font: fs.Font, Handler: plot.DefaultTextHandler}
		w := sty.Rectangle(fs.String).Max.X
		assert.LessOrEqual(t, fs.Point.X+w, fig.w-vg.Millimeter, "%s reaches the edge", fs.String)
	}
	assert.Equal(t, 2, found)
}
