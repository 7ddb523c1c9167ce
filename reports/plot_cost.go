package reports

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamha/streamha/ha/metrics"
)

// CostFigureName is the file stem of a run's recovery-versus-cost figure.
const CostFigureName = "recovery-vs-cost"

// runComparisonFigures are the figures that compare a run's strategies:
// latency around the faults, then recovery against cost.
func runComparisonFigures(r *metrics.Result, sks []runSketch, ref plotter.XYs) ([]Figure, error) {
	var out []Figure
	cmp, ok, err := comparisonFigure(sks, ref)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, cmp)
	}
	cost, ok, err := costFigure(r)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, cost)
	}
	return out, nil
}

// costPoint is one strategy in the recovery-versus-cost figure.
type costPoint struct {
	strategy string
	cost     float64
	rec      metrics.Recovery
}

// costFigure draws each strategy's recovery time against its failure-free
// CPU and bytes overhead. A strategy that did not recover is drawn above
// a line across the panel, "not recovered", where the axis has no
// numbers: never as a small recovery time. ok is false when nothing
// failed in the run.
func costFigure(r *metrics.Result) (Figure, bool, error) {
	failed := false
	for _, run := range r.Runs {
		failed = failed || run.Recovery.RecoveryMs != nil || run.Recovery.NotRecovered
	}
	if !failed {
		return Figure{}, false, nil
	}
	title := "Recovery time against cost, one point per strategy"
	var notes []string
	panel := func(t, xl string, get func(metrics.Overhead) *float64) (*plot.Plot, error) {
		var pts []costPoint
		var without []string
		for _, run := range r.Runs {
			c := get(run.Overhead)
			if c == nil || math.IsNaN(*c) || math.IsInf(*c, 0) {
				without = append(without, run.Strategy)
				continue
			}
			if run.Recovery.RecoveryMs == nil && !run.Recovery.NotRecovered {
				without = append(without, run.Strategy)
				continue
			}
			pts = append(pts, costPoint{run.Strategy, *c, run.Recovery})
		}
		if len(without) > 0 {
			notes = append(notes, fmt.Sprintf("%s: not drawn (no %s or no recovery figure): %s", t, xl, strings.Join(without, ", ")))
		}
		if len(pts) == 0 {
			return emptyPlot(t, "no strategy has both a cost and a recovery figure"), nil
		}
		return costPanel(t, xl, pts)
	}
	a, err := panel("CPU", "CPU × no-HA", func(o metrics.Overhead) *float64 { return o.CPURatio })
	if err != nil {
		return Figure{}, false, err
	}
	b, err := panel("network", "bytes × no-HA", func(o metrics.Overhead) *float64 { return o.BytesRatio })
	if err != nil {
		return Figure{}, false, err
	}
	a.Legend = plot.NewLegend() // the same strategies as b's
	fig, err := grid(CostFigureName, title, notes, figW, 4.2*vg.Inch, [][]*plot.Plot{{a, b}})
	return fig, true, err
}

// costPanel is one recovery-versus-cost panel.
func costPanel(title, xl string, pts []costPoint) (*plot.Plot, error) {
	top, anyNR := 0.0, false
	xmax := 0.0
	for _, p := range pts {
		if r := p.rec.RecoveryMs; r != nil {
			top = math.Max(top, *r)
		} else {
			anyNR = true
		}
		xmax = math.Max(xmax, p.cost)
	}
	p := newPlot(title, xl, "recovery time (ms)", nil)
	p.X.Min, p.X.Max = 0, math.Max(1, xmax)*1.15
	p.Y.Min = 0
	if top <= 0 {
		top = 1
	}
	line := top * 1.15 // above it: not recovered
	p.Y.Max = top * 1.08
	// In the band a height means nothing: the strategies that did not
	// recover stand one above the other there, each with its label.
	nr, k := 0, 0
	for _, q := range pts {
		if q.rec.RecoveryMs == nil {
			nr++
		}
	}
	nrY := func() float64 {
		k++
		return line + (top*1.42-line)*float64(k)/float64(nr+1)
	}
	if anyNR {
		p.Y.Max = top * 1.42
		p.Y.Tick.Marker = belowTicks{below: line}
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: line}, {X: p.X.Max, Y: line}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: colCrash, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
		txt := &plotter.Labels{Offset: vg.Point{X: vg.Points(4)}}
		addText(txt, p.X.Min, (line+p.Y.Max)/2, "not recovered", colCrash, draw.XLeft)
		p.Add(txt)
	}
	tags := newPlacedLabels(vg.Points(4))
	for _, q := range pts {
		col := plotutil.Color(StrategyColor(q.strategy))
		y, shape, tag := 0.0, draw.GlyphDrawer(draw.CircleGlyph{}), q.strategy
		switch {
		case q.rec.RecoveryMs != nil:
			y = *q.rec.RecoveryMs
			if q.rec.Type != "precise" && q.rec.Type != "" {
				tag += " (" + q.rec.Label() + ")"
			}
		default:
			y, shape = nrY(), draw.CrossGlyph{}
			tag += ": " + q.rec.RecoveryText()
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: q.cost, Y: y}})
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: shape, Radius: vg.Points(4)}
		p.Add(sc)
		p.Legend.Add(q.strategy, sc)
		tags.add(plotter.XY{X: q.cost, Y: y}, tag, col)
	}
	p.Add(tags)
	return p, nil
}

// belowTicks are round ticks only below a value: above it the axis holds
// no number (the not-recovered band).
type belowTicks struct{ below float64 }

// Ticks implements plot.Ticker.
func (b belowTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (niceTicks{}).Ticks(lo, math.Min(hi, b.below)) {
		if t.Value < b.below {
			out = append(out, t)
		}
	}
	return out
}
