package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
)

// maxPoints bounds the points drawn per series in run figures; beyond it
// ordinary points are thinned (anomalies and latency peaks are always kept).
const maxPoints = 4000

// marker is one annotated instant of a run.
type marker struct {
	t     float64 // s
	label string
	col   color.Color
}

var (
	colCrash    = color.RGBA{R: 200, A: 255}
	colDetect   = color.RGBA{R: 230, G: 140, A: 255}
	colTakeover = color.RGBA{G: 110, B: 200, A: 255}
	colCaughtUp = color.RGBA{G: 150, B: 60, A: 255}
	colShade    = color.NRGBA{R: 255, G: 80, B: 80, A: 60}
	colOK       = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	colDup      = color.RGBA{R: 240, G: 150, A: 255}
	colWrong    = color.RGBA{R: 210, G: 20, B: 20, A: 255}
	colSpurious = color.RGBA{R: 140, G: 40, B: 170, A: 255}
	colMissing  = color.RGBA{A: 255}
	colExpected = color.RGBA{R: 120, G: 170, B: 230, A: 255}
)

// notRecoveredMark labels the end of a run that never recovered.
const notRecoveredMark = "end of run"

// runMarkers extracts crash/pause, first detection per peer, takeovers and
// catch-ups from a trace, and the shaded windows: pauses, and each fault
// episode from its start to its recovery (episodeMarks).
func runMarkers(trace *ha.Trace, rec metrics.Recovery) ([]marker, [][2]float64) {
	var ms []marker
	var windows [][2]float64
	detected := map[string]bool{}
	sec := func(d time.Duration) float64 { return d.Seconds() }
	for _, e := range trace.Events() {
		switch e.Kind {
		case ha.EvCrash:
			ms = append(ms, marker{sec(e.T), "crash " + e.Host, colCrash})
		case ha.EvPause:
			ms = append(ms, marker{sec(e.T), "pause " + e.Host, colCrash})
			windows = append(windows, [2]float64{sec(e.T), sec(e.T + time.Duration(e.N))})
		case ha.EvPartition:
			ms = append(ms, marker{sec(e.T), "partition", colCrash})
		case ha.EvDetect:
			if !detected[e.Peer] {
				detected[e.Peer] = true
				ms = append(ms, marker{sec(e.T), "detect " + e.Peer, colDetect})
			}
		case ha.EvTakeover:
			ms = append(ms, marker{sec(e.T), "takeover " + e.Host, colTakeover})
		case ha.EvCaughtUp:
			ms = append(ms, marker{sec(e.T), "caught up", colCaughtUp})
		}
	}
	ms, windows = episodeMarks(ms, windows, rec)
	return ms, windows
}

// decorate adds shaded windows and vertical marker lines spanning [ylo, yhi];
// labels are drawn when withLabels.
func decorate(p *plot.Plot, ms []marker, windows [][2]float64, ylo, yhi float64, withLabels bool) error {
	for _, w := range windows {
		if !(w[1] > w[0]) {
			continue
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: w[0], Y: ylo}, {X: w[1], Y: ylo}, {X: w[1], Y: yhi}, {X: w[0], Y: yhi}})
		if err != nil {
			return err
		}
		poly.Color = colShade
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	for _, m := range ms {
		l, err := plotter.NewLine(plotter.XYs{{X: m.t, Y: ylo}, {X: m.t, Y: yhi}})
		if err != nil {
			return err
		}
		l.LineStyle.Color = m.col
		l.LineStyle.Width = vg.Points(1)
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
		if withLabels {
			p.Legend.Add(fmt.Sprintf("%s at %.2f s", m.label, m.t), l)
		}
	}
	if withLabels {
		notRecovered := slices.ContainsFunc(ms, func(m marker) bool { return m.label == notRecoveredMark })
		for _, w := range windows {
			if w[1] > w[0] {
				what := fmt.Sprintf("fault → recovery: %.2f–%.2f s", w[0], w[1])
				if notRecovered {
					what = fmt.Sprintf("not recovered: %.2f s → end", w[0])
				}
				p.Legend.Add(what, shadeThumb{})
				break
			}
		}
	}
	return nil
}

// LatencyFigure renders one run's end-to-end latency (log scale) and
// output throughput over time, with crash, detection, takeover and
// catch-up marked and the fault window (fault → recovery) shaded.
func LatencyFigure(name, strategy string, faulty *ha.Trace, rec metrics.Recovery) (Figure, error) {
	title := fmt.Sprintf("%s: end-to-end latency and throughput over time", strategy)
	ds := faulty.Deliveries()
	if ds.Len() == 0 {
		return single(name, title, []string{"no output delivered"}, emptyPlot(title, "the sink received no output"))
	}
	r := ds.Reader() // thinMax reads the points in order
	lat := thinMax(ds.Len(), maxPoints, func(i int) plotter.XY {
		d := r.At(i)
		return plotter.XY{X: d.T.Seconds(), Y: float64(d.Latency()) / 1e6}
	})
	ss, notes := cleanSeries([]series{{Name: "latency", XY: lat}}, false, true)
	ms, windows := runMarkers(faulty, rec)
	col := plotutil.Color(StrategyColor(strategy))

	var top, zoom *plot.Plot
	if len(ss) == 0 {
		top = emptyPlot(title, "no delivery has a positive latency")
	} else {
		var err error
		if top, err = latencyPanel(title, notes, ss[0].XY, ms, windows, true, col); err != nil {
			return Figure{}, err
		}
		// The same around the first fault, from 2 s before it to 3 s after
		// recovery (or the end of the run), where the markers are apart.
		if len(windows) > 0 {
			w := windows[len(windows)-1]
			from, to := math.Max(0, w[0]-2), w[1]+3
			if last, _ := ds.Last(); w[1] >= last.T.Seconds() { // not recovered: up to the end of the run
				to = w[1] * 1.01
			}
			var near plotter.XYs
			for _, p := range ss[0].XY {
				if p.X >= from && p.X <= to {
					near = append(near, p)
				}
			}
			if len(near) > 0 {
				zt := fmt.Sprintf("around the fault: %.1f–%.1f s", from, to)
				if zoom, err = latencyPanel(zt, nil, near, ms, windows, false, col); err != nil {
					return Figure{}, err
				}
				zoom.X.Min, zoom.X.Max = from, to
			}
		}
	}

	// Throughput in bins of about 1/100 of the run, at least 10 outputs per bin on average.
	last, _ := ds.Last() // ds is not empty
	end := last.T.Seconds()
	bin := math.Max(end/100, 10*end/float64(ds.Len()))
	bin = niceBin(bin)
	nb := int(math.Ceil(end/bin)) + 1
	counts := make([]float64, nb)
	for _, d := range ds.All() {
		counts[min(nb-1, int(d.T.Seconds()/bin))]++
	}
	thr := make(plotter.XYs, 0, 2*nb)
	ymax := 0.0
	for i, c := range counts {
		r := c / bin
		ymax = math.Max(ymax, r)
		thr = append(thr, plotter.XY{X: float64(i) * bin, Y: r}, plotter.XY{X: float64(i+1) * bin, Y: r})
	}
	bottom := newPlot("", "time (s)", fmt.Sprintf("outputs/s (%s bins)", time.Duration(bin*float64(time.Second))), nil)
	bottom.Y.Min, bottom.Y.Max = 0, math.Max(1, ymax*1.1)
	if err := decorate(bottom, ms, windows, 0, bottom.Y.Max, false); err != nil {
		return Figure{}, err
	}
	l, err := plotter.NewLine(thr)
	if err != nil {
		return Figure{}, err
	}
	l.LineStyle.Color = col
	bottom.Add(l)
	for _, m := range ms { // the end of a run that never recovered, say
		end = math.Max(end, m.t)
	}
	xmax := end * 1.01
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = 0, xmax
	}
	if zoom == nil {
		fig, err := grid(name, title, notes, figW, 6*vg.Inch, [][]*plot.Plot{{top}, {bottom}})
		fig.yShared = []*plot.Plot{top}
		return fig, err
	}
	fig, err := grid(name, title, notes, figW, 8.5*vg.Inch, [][]*plot.Plot{{top}, {zoom}, {bottom}})
	fig.yShared = []*plot.Plot{top, zoom}
	return fig, err
}

// latencyPanel plots latencies on a log axis in the strategy's colour col
// with the run's markers (labelled in the legend when withLabels).
func latencyPanel(title string, notes []string, xy plotter.XYs, ms []marker, windows [][2]float64, withLabels bool, col color.Color) (*plot.Plot, error) {
	p := newPlot(title, "", "latency (ms, log)", notes)
	useLog(&p.Y)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range xy {
		lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
	}
	lo, hi = lo*0.8, hi*4
	// The marks span far beyond the range (clipped), so that the run's
	// figures may share a wider one (sharedLatencyRange).
	if err := decorate(p, ms, windows, lo/1e3, hi*1e3, withLabels); err != nil {
		return nil, err
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Radius = vg.Points(1)
	sc.GlyphStyle.Color = col
	p.Add(sc)
	p.Y.Min, p.Y.Max = lo, hi
	return p, nil
}

// niceBin rounds a bin width in seconds up to 1, 2 or 5 × a power of ten.
func niceBin(b float64) float64 {
	if b <= 0 || math.IsNaN(b) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(b)))
	for _, m := range []float64{1, 2, 5, 10} {
		if b <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// thinMax keeps at most about limit of the n points of a time series
// (at(i) is point i, in time order), keeping the largest y in each of
// limit/2 equal time buckets (peaks survive) plus the first point. It reads
// the points in place: a long run's series is never built whole.
func thinMax(n, limit int, at func(i int) plotter.XY) plotter.XYs {
	all := func(k int) plotter.XYs {
		xy := make(plotter.XYs, k)
		for i := range xy {
			xy[i] = at(i)
		}
		return xy
	}
	if n <= limit || limit < 2 {
		return all(n)
	}
	buckets := limit / 2
	lo, hi := at(0).X, at(n-1).X
	if hi <= lo {
		return all(limit)
	}
	best := make([]int, buckets)
	bestY := make([]float64, buckets)
	for i := range best {
		best[i] = -1
	}
	for i := range n {
		p := at(i)
		b := min(buckets-1, int((p.X-lo)/(hi-lo)*float64(buckets)))
		if best[b] < 0 || p.Y > bestY[b] {
			best[b], bestY[b] = i, p.Y
		}
	}
	out := plotter.XYs{at(0)}
	for _, i := range best {
		if i > 0 {
			out = append(out, at(i))
		}
	}
	return out
}

// OutputFigure renders the output timeline: for every delivery, its time
// against the position of its id in the failure-free output, coloured by
// the classifier's label (ok, duplicate, wrong, spurious), the missing
// outputs at their expected time, and the expected outputs for reference.
// Gap shows as missing or wrong outputs, rollback as duplicates stepping
// back, precise as deliveries on the expected line.
func OutputFigure(name, strategy string, reference, faulty *ha.Trace, rec metrics.Recovery) (Figure, error) {
	return outputFigure(name, strategy, reference, faulty, rec, metrics.Classify(reference.Deliveries(), faulty.Deliveries(), nil))
}

// outputFigure is OutputFigure drawn from res, the classification of the
// faulty run against the reference.
func outputFigure(name, strategy string, reference, faulty *ha.Trace, rec metrics.Recovery, res classify.Result) (Figure, error) {
	exp, obs := reference.Deliveries(), faulty.Deliveries()
	title := fmt.Sprintf("%s: output timeline (%s)", strategy, recoveryText(res))
	if exp.Len() == 0 && obs.Len() == 0 {
		return single(name, title, []string{"no output"}, emptyPlot(title, "neither run delivered any output"))
	}
	// Positions come from the classifier's id numbering: an output sits at
	// the first expected position of its id.
	// The expected and the correct outputs are thinned as they are
	// collected (every k-th), the anomalies all kept.
	x := res.Index
	var expXY, okXY, dupXY, wrongXY, spurXY, missXY plotter.XYs
	kExp := stride(exp.Len(), maxPoints)
	for i, d := range exp.All() {
		if i%kExp == 0 {
			expXY = append(expXY, plotter.XY{X: d.T.Seconds(), Y: float64(i)})
		}
	}
	nOK := len(res.Status) - res.Duplicates - res.Wrong - res.Spurious
	kOK, iOK := stride(nOK, maxPoints), 0
	delivered := make([]bool, len(x.First))
	last := 0.0
	for i, d := range obs.All() {
		y := last // a spurious id sits where the stream was
		if id := x.Observed[i]; id >= 0 {
			y, delivered[id] = float64(x.First[id]), true
		}
		last = y
		xy := plotter.XY{X: d.T.Seconds(), Y: y}
		switch res.Status[i] {
		case classify.StatusDuplicate:
			dupXY = append(dupXY, xy)
		case classify.StatusWrong:
			wrongXY = append(wrongXY, xy)
		case classify.StatusSpurious:
			spurXY = append(spurXY, xy)
		default:
			if iOK%kOK == 0 {
				okXY = append(okXY, xy)
			}
			iOK++
		}
	}
	for id, first := range x.First { // the missing ids, in expected order
		if !delivered[id] {
			missXY = append(missXY, plotter.XY{X: exp.At(int(first)).T.Seconds(), Y: float64(first)})
		}
	}
	var notes []string
	if kOK > 1 {
		notes = append(notes, fmt.Sprintf("every %d-th correct output drawn", kOK))
	}

	p := newPlot(title, "delivery time (s)", "position in the failure-free output", notes)
	ymax := math.Max(1, float64(exp.Len()))
	ms, windows := runMarkers(faulty, rec)
	if err := decorate(p, ms, windows, 0, ymax, true); err != nil {
		return Figure{}, err
	}
	if len(expXY) > 1 {
		l, err := plotter.NewLine(expXY)
		if err != nil {
			return Figure{}, err
		}
		l.LineStyle.Color = colExpected
		l.LineStyle.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("expected (%d)", exp.Len()), l)
	}
	groups := []struct {
		label string
		xy    plotter.XYs
		col   color.Color
		shape draw.GlyphDrawer
		r     vg.Length
	}{
		{"delivered ok", okXY, colOK, draw.CircleGlyph{}, 1.2},
		{"duplicate", dupXY, colDup, draw.TriangleGlyph{}, 3},
		{"wrong", wrongXY, colWrong, draw.SquareGlyph{}, 3},
		{"spurious", spurXY, colSpurious, draw.PlusGlyph{}, 3},
		{"missing", missXY, colMissing, draw.CrossGlyph{}, 3.5},
	}
	counts := map[string]int{"delivered ok": len(okXY), "duplicate": res.Duplicates, "wrong": res.Wrong, "spurious": res.Spurious, "missing": res.Missing}
	for _, g := range groups {
		if len(g.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(g.xy)
		if err != nil {
			return Figure{}, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: g.col, Shape: g.shape, Radius: vg.Points(float64(g.r))}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s (%d)", g.label, counts[g.label]), sc)
	}
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, ymax
	return single(name, title, notes, p)
}

func recoveryText(r classify.Result) string {
	return fmt.Sprintf("%s: %d missing, %d duplicate, %d wrong", r.Label(), r.Missing, r.Duplicates, r.Wrong)
}

// stride is the step that keeps about limit of n evenly spaced points
// (every k-th from the first): 1 when n ≤ limit.
func stride(n, limit int) int {
	if n <= limit {
		return 1
	}
	return (n + limit - 1) / limit
}

// RunFigures are one strategy's latency/throughput and output-timeline
// figures, drawn from its faulty run classified against the reference, and
// its own timeline when its registry entry reads one from the trace.
func RunFigures(run metrics.FaultyRun) ([]Figure, error) {
	stem := sanitizeName(run.Strategy)
	f, err := LatencyFigure("latency-"+stem, run.Strategy, run.Trace, run.Recovery)
	if err != nil {
		return nil, err
	}
	g, err := outputFigure("outputs-"+stem, run.Strategy, run.Reference, run.Trace, run.Recovery, run.Classes)
	if err != nil {
		return nil, err
	}
	figs := []Figure{f, g}
	ck, ok, err := TimelineFigure("timeline-"+stem, run.Strategy, run.Trace, run.Recovery)
	if err != nil {
		return nil, err
	}
	if ok {
		figs = append(figs, ck)
	}
	return figs, nil
}

// shadeThumb is the legend thumbnail of a shaded window.
type shadeThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (shadeThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(colShade, c.ClipPolygonXY(pts))
}
