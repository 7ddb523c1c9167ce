package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// TimelineFigure renders a strategy's own timeline of a run — the history
// its registry entry reads from the trace (strategies.Info.Timeline):
// passive standby's and global-checkpoint's checkpoints, upstream backup's
// queues — in the strategy's colour beside the run's crash, detection and
// takeover marks. ok is false when the strategy has no timeline or the
// trace holds nothing for it.
func TimelineFigure(name, strategy string, trace *ha.Trace, rec metrics.Recovery) (fig Figure, ok bool, err error) {
	info, err := strategies.Lookup(strategy)
	if err != nil || info.Timeline == nil {
		return Figure{}, false, nil
	}
	tl, ok := info.Timeline(trace)
	if !ok || len(tl.Panels) == 0 {
		return Figure{}, false, nil
	}
	title := strategy + ": " + tl.Title
	ms, windows := runMarkers(trace, rec)
	end := 0.0
	if last, ok := trace.Deliveries().Last(); ok {
		end = last.T.Seconds()
	}
	for _, m := range ms {
		end = max(end, m.t)
	}
	for _, p := range tl.Panels {
		for _, s := range p.Series {
			for _, q := range s.Points {
				end = max(end, (q.T + q.Span).Seconds())
			}
		}
	}
	col := plotutil.Color(StrategyColor(strategy))
	var rows [][]*plot.Plot
	height := vg.Inch
	for i, tp := range tl.Panels {
		p, err := timelinePanel(tp, col, ms, windows, i == 0)
		if err != nil {
			return Figure{}, false, err
		}
		p.X.Min, p.X.Max = 0, end*1.01
		if i == len(tl.Panels)-1 {
			p.X.Label.Text = "time (s)"
		}
		rows = append(rows, []*plot.Plot{p})
		height += 2.2 * vg.Inch
	}
	fig, err = grid(name, title, tl.Notes, figW, height, rows)
	return fig, true, err
}

// timelinePanel draws one panel of a timeline.
func timelinePanel(tp strategies.TimelinePanel, col color.Color, ms []marker, windows [][2]float64, withMarks bool) (*plot.Plot, error) {
	hi := 0.0
	for _, s := range tp.Series {
		for _, q := range s.Points {
			hi = max(hi, q.Y)
		}
	}
	if hi <= 0 {
		hi = 1
	}
	p := newPlot(tp.Title, "", tp.YLabel, nil)
	p.Y.Min, p.Y.Max = 0, hi*1.15
	if err := decorate(p, ms, windows, 0, p.Y.Max, withMarks); err != nil {
		return nil, err
	}
	for _, ev := range tp.Events {
		l, err := plotter.NewLine(plotter.XYs{{X: ev.T.Seconds(), Y: 0}, {X: ev.T.Seconds(), Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: colTakeover, Width: vg.Points(1.2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s at %.2f s", ev.Label, ev.T.Seconds()), l)
	}
	for _, s := range tp.Series {
		if err := addTimelineSeries(p, s, col); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addTimelineSeries draws one series in its style. A series of more than
// maxPoints points is drawn every k-th, and the panel title says so.
func addTimelineSeries(p *plot.Plot, s strategies.TimelineSeries, col color.Color) error {
	k := stride(len(s.Points), maxPoints)
	if k > 1 {
		p.Title.Text += fmt.Sprintf("\n(every %d-th point of %q drawn)", k, s.Label)
	}
	var xy plotter.XYs
	for i, q := range s.Points {
		if i%k == 0 {
			xy = append(xy, plotter.XY{X: q.T.Seconds(), Y: q.Y})
		}
	}
	if len(xy) == 0 {
		return nil
	}
	shape, radius := draw.GlyphDrawer(draw.CircleGlyph{}), vg.Points(2)
	if s.Hollow {
		shape = draw.RingGlyph{}
	}
	glyphCol := col
	if s.Highlight {
		shape, radius, glyphCol = draw.RingGlyph{}, vg.Points(6), colCrash
	}
	var thumbs []plot.Thumbnailer
	switch s.Style {
	case strategies.TimelineStems:
		p.Add(&stemLines{xy: xy, col: col})
	case strategies.TimelineSteps:
		var st plotter.XYs
		for i, q := range xy {
			if i > 0 {
				st = append(st, plotter.XY{X: q.X, Y: xy[i-1].Y})
			}
			st = append(st, q)
		}
		l, err := plotter.NewLine(st)
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.2)}
		p.Add(l)
		p.Legend.Add(s.Label, l)
		return nil
	case strategies.TimelineSpans:
		for i, q := range s.Points {
			if i%k != 0 {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: q.T.Seconds(), Y: q.Y}, {X: (q.T + q.Span).Seconds(), Y: q.Y}})
			if err != nil {
				return err
			}
			l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(3)}
			p.Add(l)
			thumbs = append(thumbs, l)
		}
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: glyphCol, Shape: shape, Radius: radius}
	p.Add(sc)
	if len(thumbs) > 0 {
		thumbs = thumbs[:1]
	}
	p.Legend.Add(s.Label, append(thumbs, sc)...)
	return nil
}

// stemLines draws a thin vertical line from 0 to each point.
type stemLines struct {
	xy  plotter.XYs
	col color.Color
}

// Plot implements plot.Plotter.
func (s *stemLines) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := draw.LineStyle{Color: s.col, Width: vg.Points(0.5)}
	for _, xy := range s.xy {
		c.StrokeLine2(sty, tx(xy.X), ty(0), tx(xy.X), ty(xy.Y))
	}
}
