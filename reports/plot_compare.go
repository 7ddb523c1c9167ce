package reports

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CompareFigureName is the file stem of a run's comparison figure.
const CompareFigureName = "compare-latency"

// colReference draws the failure-free run behind the strategies.
var colReference = color.NRGBA{R: 120, G: 120, B: 120, A: 110}

// markGlyphs are the shapes of the marks, the same for every strategy
// (the colour tells the strategy).
var markGlyphs = map[markKind]draw.GlyphDrawer{
	markDetect:    draw.PyramidGlyph{},
	markTakeover:  draw.BoxGlyph{},
	markCaughtUp:  draw.RingGlyph{},
	markRecovered: draw.CircleGlyph{},
}

// markNames name the marks in the legend.
var markNames = map[markKind]string{
	markDetect:    "first detection",
	markTakeover:  "first takeover",
	markCaughtUp:  "last caught up",
	markRecovered: "recovered (recovery time)",
}

// markOffset lifts a mark within its strategy's row, so that marks at the
// same instant stay apart.
var markOffset = map[markKind]float64{markDetect: 0.25, markTakeover: 0, markCaughtUp: -0.25, markRecovered: 0}

// ComparisonFigure draws every strategy of a run around each fault
// episode: on top the sink latency of all strategies on one axis, with
// the failure-free run's (ref) drawn behind them and the fault shaded;
// below, one row per strategy with its first detection, first takeover,
// last catch-up and recovery, zoomed to the episode so that marks tens of
// milliseconds apart stay apart. ok is false when the run had no fault.
func comparisonFigure(sks []runSketch, ref plotter.XYs) (Figure, bool, error) {
	eps := episodesOf(sks)
	if len(eps) == 0 || len(sks) == 0 {
		return Figure{}, false, nil
	}
	title := "All strategies around the fault: latency, detection, takeover and recovery"
	var notes []string
	if len(eps) > maxEpisodes {
		notes = append(notes, fmt.Sprintf("the first %d of %d fault episodes drawn", maxEpisodes, len(eps)))
		eps = eps[:maxEpisodes]
	}
	if len(eps) > 1 {
		notes = append(notes, "recovery time is measured from the first fault; later episodes show detection, takeover and catch-up")
	}
	var plots []*plot.Plot
	var heights []vg.Length
	for i, e := range eps {
		lat, err := episodeLatency(e, sks, ref)
		if err != nil {
			return Figure{}, false, err
		}
		marks, err := compareMarks(e, sks)
		if err != nil {
			return Figure{}, false, err
		}
		if len(eps) > 1 {
			lat.Title.Text = fmt.Sprintf("episode %d: ", i+1) + lat.Title.Text
		}
		marks.X.Label.Text = "time (s)"
		plots = append(plots, lat, marks)
		heights = append(heights, 3.4*vg.Inch, vg.Length(0.9+0.32*float64(len(sks)))*vg.Inch)
	}
	fig, err := stacked(CompareFigureName, title, notes, figW, heights, plots)
	return fig, true, err
}

// episodeLatency is the latency panel of an episode.
func episodeLatency(e episode, sks []runSketch, ref plotter.XYs) (*plot.Plot, error) {
	within := func(xy plotter.XYs) plotter.XYs {
		var out plotter.XYs
		for _, p := range xy {
			if p.X >= e.latFrom && p.X <= e.latTo {
				out = append(out, p)
			}
		}
		return out
	}
	var all []float64
	ss := []series{{Name: "failure-free run", XY: within(ref)}}
	for _, s := range sks {
		ss = append(ss, series{Name: s.strategy, XY: within(s.lat)})
	}
	for _, s := range ss {
		for _, p := range s.XY {
			all = append(all, p.Y)
		}
	}
	logY := wantLog(all)
	ss, notes := cleanSeries(ss, false, logY)
	var what []string
	for _, f := range e.faults {
		what = append(what, f.what+" at "+f.at())
	}
	ylabel := "sink latency (ms)"
	if logY {
		ylabel = "sink latency (ms, log)"
	}
	title := wrapText(strings.Join(what, ", "), 2*maxTitleLine) +
		fmt.Sprintf("\nsink latency %.2f–%.2f s; below, the marks %.2f–%.2f s (between the dotted lines)", e.latFrom, e.latTo, e.from, e.to)
	p := newPlot(title, "", ylabel, notes)
	if logY {
		useLog(&p.Y)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, q := range s.XY {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	if logY {
		lo, hi = lo*0.7, hi*1.6
	} else {
		lo, hi = 0, hi*1.1+1e-9
	}
	if err := shadeEpisode(p, e, sks, lo, hi); err != nil {
		return nil, err
	}
	for _, s := range ss {
		if s.Name == "failure-free run" {
			l, err := plotter.NewLine(s.XY)
			if err != nil {
				return nil, err
			}
			l.LineStyle = draw.LineStyle{Color: colReference, Width: vg.Points(5)}
			p.Add(l)
			p.Legend.Add("failure-free run (no HA)", l)
			continue
		}
		// Points only: latency exists where an output was delivered, and a
		// line would invent it between outputs a second apart. Each
		// strategy has its own glyph, so that points on one another show.
		look := strategyLook(s.Name)
		sc, err := plotter.NewScatter(s.XY)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(look.color), Shape: plotutil.Shape(look.color), Radius: vg.Points(2.5)}
		p.Add(sc)
		p.Legend.Add(s.Name, sc)
	}
	// The span the marks below zoom into.
	for _, x := range []float64{e.from, e.to} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
		p.Add(l)
	}
	p.X.Min, p.X.Max = e.latFrom, e.latTo
	p.Y.Min, p.Y.Max = lo, hi
	return p, nil
}

// shadeEpisode shades each fault of the episode: a pause or partition to
// its end, a crash to the last recovery among the strategies (the end of
// the view when none recovered in it), and draws a line at each fault.
func shadeEpisode(p *plot.Plot, e episode, sks []runSketch, lo, hi float64) error {
	lastRec := math.Inf(-1)
	for _, s := range sks {
		for _, m := range s.marks {
			if m.kind == markRecovered && m.t >= e.start() && m.t <= e.to {
				lastRec = math.Max(lastRec, m.t)
			}
		}
	}
	for i, f := range e.faults {
		end := f.end
		if end <= f.t {
			end = lastRec
			if math.IsInf(end, -1) {
				end = e.to
			}
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: f.t, Y: lo}, {X: end, Y: lo}, {X: end, Y: hi}, {X: f.t, Y: hi}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = colShade, 0
		p.Add(poly)
		l, err := plotter.NewLine(plotter.XYs{{X: f.t, Y: lo}, {X: f.t, Y: hi}})
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: colCrash, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		p.Add(l)
		if i == 0 {
			what := "fault → last recovery"
			if f.end > f.t {
				what = "fault (" + f.what + ")"
			} else if math.IsInf(lastRec, -1) {
				what = "after the fault"
			}
			p.Legend.Add(what, shadeThumb{})
		}
	}
	return nil
}

// compareMarks is the row-per-strategy panel of an episode's marks.
func compareMarks(e episode, sks []runSketch) (*plot.Plot, error) {
	p := newPlot("", "", "", nil)
	n := len(sks)
	// Each row's tick names the strategy and, below it, the recovery of
	// the episode in view: beside the bar the figure would cover the
	// marks, which sit at the recovery's end when nothing was late.
	ticks := make([]plot.Tick, n)
	row := func(i int) float64 { return float64(n - 1 - i) }
	for i, s := range sks {
		ticks[i] = plot.Tick{Value: row(i), Label: s.strategy}
	}
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	// Right-aligned labels at the panel's end (SVG drops trailing
	// spaces, so the gap is an offset).
	ends := &plotter.Labels{Offset: vg.Point{X: -vg.Points(3)}}
	anyMark := false
	for i, s := range sks {
		col := plotutil.Color(StrategyColor(s.strategy))
		y := row(i)
		// The marks in view: the first detection and takeover, the last
		// catch-up, and the recovery of the first fault.
		var shown []mark
		for _, k := range []markKind{markDetect, markTakeover, markCaughtUp, markRecovered} {
			idx := -1
			for j, m := range s.marks {
				if m.kind != k || m.t < e.start() || m.t > e.to {
					continue
				}
				if idx < 0 || k == markCaughtUp {
					idx = j
				}
			}
			if idx >= 0 {
				shown = append(shown, s.marks[idx])
			}
		}
		// The recovery interval of the run's fault episode in view as a
		// bar, from the episode's own start.
		if ep, ok := s.episodeAt(e.start(), e.to); ok {
			from := ep.StartMs / 1e3
			to, dashed := e.to, true
			if r := ep.RecoveryMs; r != nil {
				to, dashed = math.Min(e.to, from+*r/1e3), false
			}
			bar, err := plotter.NewLine(plotter.XYs{{X: from, Y: y}, {X: to, Y: y}})
			if err != nil {
				return nil, err
			}
			bar.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5)}
			if dashed {
				bar.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(bar)
			switch {
			case ep.RecoveryMs != nil:
				label := fmt.Sprintf("%.1f ms", *ep.RecoveryMs)
				if s.rec.Type != "precise" && s.rec.Type != "" {
					label += " (" + s.rec.Label() + ")"
				}
				ticks[i].Label += "\n" + label
			case ep.NotRecovered:
				addText(ends, e.to, y+0.3, fmt.Sprintf("not recovered (> %.1f s) →", ptrOr(ep.ObservedMs)/1e3), col, draw.XRight)
			}
		}
		anyMark = anyMark || len(shown) > 0
		for _, m := range shown {
			sc, err := plotter.NewScatter(plotter.XYs{{X: m.t, Y: y + markOffset[m.kind]}})
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: markGlyphs[m.kind], Radius: vg.Points(3.5)}
			p.Add(sc)
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	for _, f := range e.faults {
		l, err := plotter.NewLine(plotter.XYs{{X: f.t, Y: p.Y.Min}, {X: f.t, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: colCrash, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		p.Add(l)
	}
	if !anyMark {
		addText(ends, (e.from+e.to)/2, float64(n-1)/2, "no detection, takeover or recovery in this span", color.Gray{Y: 90}, draw.XCenter)
	}
	if len(ends.XYs) > 0 {
		p.Add(ends)
	}
	for _, k := range []markKind{markDetect, markTakeover, markCaughtUp, markRecovered} {
		sc, err := plotter.NewScatter(plotter.XYs{{}})
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 70}, Shape: markGlyphs[k], Radius: vg.Points(3.5)}
		p.Legend.Add(markNames[k], sc)
	}
	p.X.Min, p.X.Max = e.from, e.to
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	return p, nil
}

// addText adds a label at (x, y) in colour col.
func addText(l *plotter.Labels, x, y float64, s string, col color.Color, align draw.XAlignment) {
	sty := newPlacedLabels(0).style
	sty.Color, sty.XAlign, sty.YAlign = col, align, draw.YCenter
	l.XYs = append(l.XYs, plotter.XY{X: x, Y: y})
	l.Labels = append(l.Labels, s)
	l.TextStyle = append(l.TextStyle, sty)
}

// stacked renders plots above each other, in the given heights, with
// their plotting areas aligned left and right and their legends in one
// strip on the right.
func stacked(name, title string, notes []string, w vg.Length, heights []vg.Length, plots []*plot.Plot) (Figure, error) {
	var h vg.Length
	for _, x := range heights {
		h += x
	}
	return renderFigure(name, title, notes, w, h, func(dc draw.Canvas) {
		dc = draw.Crop(dc, 2*vg.Millimeter, -2*vg.Millimeter, 2*vg.Millimeter, -2*vg.Millimeter)
		var strip vg.Length
		for _, p := range plots {
			strip = max(strip, legendWidth(p))
		}
		rows := make([]draw.Canvas, len(plots))
		top := dc.Max.Y
		scale := (dc.Max.Y - dc.Min.Y) / h
		for i := range plots {
			rows[i] = dc
			rows[i].Max.Y = top
			rows[i].Min.Y = top - heights[i]*scale
			top = rows[i].Min.Y
		}
		// The widest left axis sets where every plotting area starts.
		left := make([]vg.Length, len(plots))
		var most vg.Length
		for i, p := range plots {
			left[i] = p.DataCanvas(draw.Crop(rows[i], 0, -strip, 0, 0)).Min.X - rows[i].Min.X
			most = max(most, left[i])
		}
		for i, p := range plots {
			drawPlot(p, draw.Crop(rows[i], most-left[i], 0, 0, 0), strip)
		}
	})
}

// sharedLatencyRange gives the latency panels of the strategies' figures
// one y-range, the union of theirs, so that they compare, and draws the
// figures again.
func sharedLatencyRange(figs []Figure) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range figs {
		for _, p := range f.yShared {
			if _, isLog := p.Y.Scale.(plot.LogScale); isLog {
				lo, hi = math.Min(lo, p.Y.Min), math.Max(hi, p.Y.Max)
			}
		}
	}
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	for i := range figs {
		f := &figs[i]
		if len(f.yShared) == 0 {
			continue
		}
		for _, p := range f.yShared {
			if _, isLog := p.Y.Scale.(plot.LogScale); isLog {
				p.Y.Min, p.Y.Max = lo, hi
			}
		}
		again, err := renderFigure(f.Name, f.Title, f.Notes, f.w, f.h, f.paint)
		if err != nil {
			return err
		}
		f.SVG = again.SVG
	}
	return nil
}

// ptrOr is *p, or 0 when p is nil.
func ptrOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
