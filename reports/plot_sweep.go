package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamha/streamha/experiment"
)

// sweepLook draws each series of a sweep in the colour of its strategy,
// the same in every figure; with several swept parameters a strategy has
// several series (named "strategy (p=v, …)"), told apart by glyph and
// dashes in the order of names.
func sweepLook(names []string) func(string) seriesLook {
	return func(n string) seriesLook {
		st, _, _ := strings.Cut(n, " (")
		look := strategyLook(st)
		for _, o := range names {
			if o == n {
				break
			}
			if strings.HasPrefix(o, st+" (") {
				look.variant++
			}
		}
		return look
	}
}

// notRecoveredSeries has, per strategy, a point at every setting where
// some seeds did not recover: at the shortest time observed after the
// fault among them (their recovery took longer), tagged "k/N".
func notRecoveredSeries(sw *experiment.Sweep, rows []SweepRow, ax paramAxis) []series {
	byName := map[string]*series{}
	var order []string
	for _, r := range rows {
		if r.NotRecovered == 0 || r.ObservedMs.N == 0 {
			continue
		}
		n := seriesName(sw, r)
		s, ok := byName[n]
		if !ok {
			s = &series{Name: n, Tags: []string{}}
			byName[n] = s
			order = append(order, n)
		}
		s.XY = append(s.XY, plotter.XY{X: ax.x(r.Values[0]), Y: r.ObservedMs.Min})
		s.Tags = append(s.Tags, fmt.Sprintf("%d/%d", r.NotRecovered, r.Seeds))
	}
	out := make([]series, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

// dropNotRecovered removes from ss the points with no recovery time
// where nr marks seeds not recovered: they are drawn as crosses, not
// reported as values missing.
func dropNotRecovered(ss, nr []series) []series {
	marked := map[string][]float64{}
	for _, s := range nr {
		for _, xy := range s.XY {
			marked[s.Name] = append(marked[s.Name], xy.X)
		}
	}
	out := make([]series, 0, len(ss))
	for _, s := range ss {
		var keep series
		keep.Name = s.Name
		for i, xy := range s.XY {
			if math.IsNaN(xy.Y) && slices.Contains(marked[s.Name], xy.X) {
				continue
			}
			keep.XY = append(keep.XY, xy)
			if s.Err != nil {
				keep.Err = append(keep.Err, s.Err[i])
			}
			if s.Tags != nil {
				keep.Tags = append(keep.Tags, s.Tags[i])
			}
		}
		if len(keep.XY) > 0 {
			out = append(out, keep)
		}
	}
	return out
}

// addNotRecovered draws not-recovered points as large crosses in their
// strategy's colour, labelled with how many seeds did not recover, and a
// legend entry per strategy with the shortest time observed.
func addNotRecovered(p *plot.Plot, ss []series, colorOf func(string) seriesLook) (*placedLabels, error) {
	tags := newPlacedLabels(vg.Points(5))
	for k, s := range ss {
		col := plotutil.Color(colorOf(s.Name).color)
		// Several strategies not recovered at one setting and time stand
		// side by side, a cross's width apart, each with its own label.
		dx := vg.Length(float64(k)-float64(len(ss)-1)/2) * notRecoveredDodge
		sc := &dodgedScatter{xy: s.XY, dx: dx, style: draw.GlyphStyle{Color: col, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}}
		p.Add(sc)
		for i, xy := range s.XY {
			tags.addDodged(xy, dx, s.Tags[i], col)
			// Room above the crosses for their labels.
			p.Y.Max = math.Max(p.Y.Max, xy.Y*1.25)
		}
		least := slices.MinFunc(s.XY, func(a, b plotter.XY) int { return cmp.Compare(a.Y, b.Y) }).Y
		p.Legend.Add(fmt.Sprintf("%s: not recovered (> %.1f s)", s.Name, least/1e3), sc)
	}
	p.Add(tags)
	// Room either side for the crosses stood beside their point.
	if len(ss) > 1 {
		if _, isLog := p.X.Scale.(plot.LogScale); isLog && p.X.Min > 0 {
			r := math.Log(p.X.Max/p.X.Min) * 0.04
			p.X.Min, p.X.Max = p.X.Min*math.Exp(-r), p.X.Max*math.Exp(r)
		} else {
			r := (p.X.Max - p.X.Min) * 0.04
			p.X.Min, p.X.Max = p.X.Min-r, p.X.Max+r
		}
	}
	return tags, nil
}

// notRecoveredDodge is how far apart the crosses of strategies not
// recovered at the same point stand.
const notRecoveredDodge = 12 * vg.Millimeter / 3

// lineFigure is a parameter-vs-figure plot with error bars, or an empty
// plot saying why.
func lineFigure(title string, ax paramAxis, logX bool, ylabel string, ss []series, notes []string, colorOf func(string) seriesLook, empty string) (*plot.Plot, error) {
	if len(ss) == 0 {
		return emptyPlot(title, empty), nil
	}
	p := newPlot(title, ax.label(), ylabel, notes)
	if logX {
		useLog(&p.X)
	}
	var ticks []plot.Tick
	for i, v := range ax.values {
		if !logX || ax.pos[i] > 0 {
			ticks = append(ticks, plot.Tick{Value: ax.pos[i], Label: v})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if ax.kind == axisCategory {
		p.X.Min, p.X.Max = -0.5, float64(len(ax.values))-0.5
	}
	ymin := math.Inf(1)
	for _, s := range ss {
		for i, xy := range s.XY {
			lo := xy.Y
			if s.Err != nil {
				lo -= s.Err[i]
			}
			ymin = math.Min(ymin, lo)
		}
	}
	if ymin >= 0 {
		p.Y.Min = 0
	}
	headroom(p, ss)
	return p, addSeries(p, ss, colorOf, true)
}

func prefixNotes(prefix string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = prefix + ": " + n
	}
	return out
}

// seriesName is the strategy, plus the values of the other swept
// parameters when there are several.
func seriesName(sw *experiment.Sweep, r SweepRow) string {
	if len(sw.Params) < 2 {
		return r.Strategy
	}
	var parts []string
	for i := 1; i < len(sw.Params); i++ {
		parts = append(parts, sw.Params[i].Name+"="+r.Values[i])
	}
	return r.Strategy + " (" + strings.Join(parts, ", ") + ")"
}

// seriesNames lists series in strategy order, then setting order.
func seriesNames(sw *experiment.Sweep, rows []SweepRow) []string {
	var names []string
	for _, st := range sw.Strategies {
		for _, r := range rows {
			if r.Strategy != st {
				continue
			}
			if n := seriesName(sw, r); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// RepresentativeSetting is the setting shown in single-setting figures:
// the middle value of every swept parameter.
func RepresentativeSetting(sw *experiment.Sweep) int {
	s := 0
	for _, p := range sw.Params {
		s = s*len(p.Values) + (len(p.Values)-1)/2
	}
	return s
}

func settingLabel(sw *experiment.Sweep, vals []string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = sw.Params[i].Name + "=" + v
	}
	return strings.Join(parts, ", ")
}

// headroom leaves a margin of 8 % above the highest point (error bar
// included) for its label.
func headroom(p *plot.Plot, ss []series) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i, xy := range s.XY {
			e := 0.0
			if s.Err != nil {
				e = s.Err[i]
			}
			lo, hi = math.Min(lo, xy.Y-e), math.Max(hi, xy.Y+e)
		}
	}
	if p.Y.Min == 0 && lo >= 0 {
		lo = 0
	}
	if hi > lo {
		p.Y.Max = hi + 0.08*(hi-lo)
	} else {
		p.Y.Max = hi + math.Max(1, math.Abs(hi)*0.5)
	}
}

// maxX is the largest x of any point.
func maxX(ss []series) float64 {
	m := 0.0
	for _, s := range ss {
		for _, xy := range s.XY {
			m = math.Max(m, xy.X)
		}
	}
	return m
}

// mergeSame joins points of a series that coincide (a strategy the
// parameter does not affect), labelling them with the first and last tags.
func mergeSame(s series) series {
	out := series{Name: s.Name, Tags: []string{}}
	for i, xy := range s.XY {
		j := slices.IndexFunc(out.XY, func(o plotter.XY) bool { return o == xy })
		if j < 0 {
			out.XY = append(out.XY, xy)
			out.Tags = append(out.Tags, s.Tags[i])
			continue
		}
		first, _, _ := strings.Cut(out.Tags[j], "…")
		out.Tags[j] = first + "…" + s.Tags[i]
	}
	return out
}

// sortByX orders a series' points by x, keeping each point's confidence
// interval and label with it (values may be listed in any order on the
// command line).
func sortByX(s *series) {
	idx := make([]int, len(s.XY))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.XY[idx[a]].X < s.XY[idx[b]].X })
	s.XY = permute(s.XY, idx)
	if len(s.Err) == len(idx) {
		s.Err = permute(s.Err, idx)
	}
	if len(s.Tags) == len(idx) {
		s.Tags = permute(s.Tags, idx)
	}
}

func permute[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}
