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
	"github.com/streamha/streamha/ha/metrics"
)

// SweepFigures renders the sweep plots: recovery time vs the first swept
// parameter (95 % confidence bars over seeds), overhead (CPU, bytes,
// memory) vs the parameter, the overhead/recovery trade-off scatter, and
// the CDF of recovery time per fault episode at the representative setting.
func SweepFigures(sw *experiment.Sweep, points []PointResult) ([]Figure, error) {
	rows := Aggregate(points)
	ax := newParamAxis(sw.Params[0].Name, sw.Params[0].Values)
	stem := sanitizeName(sw.Params[0].Name)
	names := seriesNames(sw, rows)
	colorOf := sweepLook(names)
	logX := ax.kind != axisCategory && wantLog(ax.pos)

	var figs []Figure
	add := func(f Figure, err error) error {
		if err != nil {
			return err
		}
		figs = append(figs, f)
		return nil
	}
	build := func(get func(SweepRow) Stat) []series {
		byName := map[string]*series{}
		for _, r := range rows {
			n := seriesName(sw, r)
			s, ok := byName[n]
			if !ok {
				s = &series{Name: n}
				byName[n] = s
			}
			st := get(r)
			s.XY = append(s.XY, plotter.XY{X: ax.x(r.Values[0]), Y: st.meanOrNaN()})
			s.Err = append(s.Err, st.CI95)
		}
		out := make([]series, 0, len(names))
		for _, n := range names {
			if s, ok := byName[n]; ok {
				sortByX(s)
				out = append(out, *s)
			}
		}
		return out
	}

	// 1. Recovery time vs the parameter.
	{
		title := "Recovery time vs " + ax.name + " (mean, 95 % CI over seeds)"
		nr := notRecoveredSeries(sw, rows, ax)
		ss, notes := cleanSeries(dropNotRecovered(build(func(r SweepRow) Stat { return r.RecoveryMs }), nr), logX, false)
		if len(nr) > 0 {
			notes = append(notes, "× = seeds not recovered by the end of the run, at the time observed; never averaged")
		}
		p, err := lineFigure(title, ax, logX, "recovery time (ms)", ss, notes, colorOf, "no strategy has a recovery time (no fault, or no run recovered)")
		if err != nil {
			return nil, err
		}
		if len(nr) > 0 {
			if len(ss) == 0 { // every run failed to recover: draw them on a fresh plot
				p = newPlot(title, ax.label(), "recovery time (ms)", notes)
				p.Y.Min = 0
			}
			if _, err := addNotRecovered(p, nr, colorOf); err != nil {
				return nil, err
			}
		}
		if err := add(single("recovery-vs-"+stem, title, notes, p)); err != nil {
			return nil, err
		}
	}
	// 2. Overhead vs the parameter.
	{
		title := "Runtime overhead vs " + ax.name + " (failure-free run, against no HA)"
		var allNotes []string
		panel := func(t, y string, get func(SweepRow) Stat) (*plot.Plot, error) {
			ss, notes := cleanSeries(build(get), logX, false)
			allNotes = append(allNotes, prefixNotes(t, notes)...)
			return lineFigure(t, ax, logX, y, ss, notes, colorOf, "no "+t+" figure")
		}
		cpu, err := panel("CPU", "CPU × no-HA", func(r SweepRow) Stat { return r.CPURatio })
		if err != nil {
			return nil, err
		}
		byt, err := panel("bytes sent", "bytes × no-HA", func(r SweepRow) Stat { return r.BytesRatio })
		if err != nil {
			return nil, err
		}
		mem, err := panel("memory", "peak queue (kB)", func(r SweepRow) Stat {
			s := r.PeakQueueBytes
			s.Mean, s.CI95, s.Min, s.Max = s.Mean/1e3, s.CI95/1e3, s.Min/1e3, s.Max/1e3
			return s
		})
		if err != nil {
			return nil, err
		}
		// The three panels show the same series: one legend, on the last.
		for _, q := range []*plot.Plot{cpu, byt} {
			q.Legend = plot.NewLegend()
		}
		if err := add(grid("overhead-vs-"+stem, title, allNotes, 12*vg.Inch, 4*vg.Inch, [][]*plot.Plot{{cpu, byt, mem}})); err != nil {
			return nil, err
		}
	}
	// 3. Trade-off: overhead vs recovery time, one point per strategy and setting.
	{
		title := "Trade-off: overhead vs recovery time (one point per strategy and " + ax.name + ")"
		// Settings where no seed recovered have no recovery time to plot:
		// say so by strategy instead of counting points without a value.
		never := map[string]int{}
		var neverNames []string
		for _, r := range rows {
			if r.NotRecovered > 0 && r.RecoveryMs.N == 0 {
				n := seriesName(sw, r)
				if never[n] == 0 {
					neverNames = append(neverNames, n)
				}
				never[n]++
			}
		}
		var neverNote []string
		if len(neverNames) > 0 {
			var parts []string
			for _, n := range neverNames {
				parts = append(parts, fmt.Sprintf("%s at %d setting%s", n, never[n], plural(never[n])))
			}
			neverNote = []string{"not recovered at any seed, not drawn: " + strings.Join(parts, ", ")}
		}
		allNotes := slices.Clone(neverNote)
		// panel is one trade-off panel; extra notes go in its title.
		panel := func(t, xl string, get func(SweepRow) Stat, extra []string) (*plot.Plot, error) {
			byName := map[string]*series{}
			for _, r := range rows {
				if r.NotRecovered > 0 && r.RecoveryMs.N == 0 {
					continue
				}
				n := seriesName(sw, r)
				s, ok := byName[n]
				if !ok {
					s = &series{Name: n, Tags: []string{}}
					byName[n] = s
				}
				s.XY = append(s.XY, plotter.XY{X: get(r).meanOrNaN(), Y: r.RecoveryMs.meanOrNaN()})
				tag := r.Values[0]
				if r.NotRecovered > 0 {
					tag += fmt.Sprintf(" (%d/%d not recovered)", r.NotRecovered, r.Seeds)
				}
				s.Tags = append(s.Tags, tag)
			}
			var ss []series
			for _, n := range names {
				if s, ok := byName[n]; ok {
					ss = append(ss, mergeSame(*s))
				}
			}
			ss, notes := cleanSeries(ss, false, false)
			allNotes = append(allNotes, prefixNotes(t, notes)...)
			if len(ss) == 0 {
				return emptyPlot(t, "no run has both an overhead and a recovery time"), nil
			}
			p := newPlot(t, xl, "recovery time (ms)", append(notes, extra...))
			// Both axes are a ratio and a duration: they start at zero.
			p.X.Min, p.Y.Min = 0, 0
			headroom(p, ss)
			p.X.Max = math.Max(p.X.Max, 1.05*maxX(ss))
			return p, addSeries(p, ss, colorOf, false)
		}
		a, err := panel("CPU overhead", "CPU × no-HA", func(r SweepRow) Stat { return r.CPURatio }, neverNote)
		if err != nil {
			return nil, err
		}
		b, err := panel("network overhead", "bytes × no-HA", func(r SweepRow) Stat { return r.BytesRatio }, nil)
		if err != nil {
			return nil, err
		}
		a.Legend = plot.NewLegend() // the same series as b's legend
		if err := add(grid("tradeoff-"+stem, title, allNotes, 12*vg.Inch, 5*vg.Inch, [][]*plot.Plot{{a, b}})); err != nil {
			return nil, err
		}
	}
	// 6. CDF of recovery time per fault episode over the seeds at the
	// representative setting.
	{
		rep := RepresentativeSetting(sw)
		vals := sw.SettingValues(rep)
		title := "CDF of recovery time per fault episode over " + fmt.Sprint(len(sw.Seeds)) + " seeds at " + settingLabel(sw, vals)
		per := map[string][]float64{}
		censored := map[string]int{} // episodes not recovered: the CDF never reaches them
		for _, p := range points {
			if p.Setting != rep {
				continue
			}
			for _, r := range p.Result.Runs {
				// One point per fault episode; a run from before episodes
				// counts as one.
				eps := r.Recovery.Episodes
				if len(eps) == 0 {
					eps = []metrics.Episode{{RecoveryMs: r.Recovery.RecoveryMs, NotRecovered: r.Recovery.NotRecovered}}
				}
				for _, e := range eps {
					switch {
					case e.RecoveryMs != nil:
						per[r.Strategy] = append(per[r.Strategy], *e.RecoveryMs)
					case e.NotRecovered:
						censored[r.Strategy]++
					}
				}
			}
		}
		var ss []series
		cdfName := map[string]string{} // series name → strategy, for colours
		for _, n := range sw.Strategies {
			xs := slices.Clone(per[n])
			if len(xs) == 0 {
				continue
			}
			sort.Float64s(xs)
			total := float64(len(xs) + censored[n])
			name := n
			if c := censored[n]; c > 0 {
				name = fmt.Sprintf("%s (%d of %d not recovered)", n, c, len(xs)+c)
			}
			cdfName[name] = n
			s := series{Name: name}
			for i, x := range xs {
				if i == 0 {
					s.XY = append(s.XY, plotter.XY{X: x, Y: 0})
				} else {
					s.XY = append(s.XY, plotter.XY{X: x, Y: float64(i) / total})
				}
				s.XY = append(s.XY, plotter.XY{X: x, Y: float64(i+1) / total})
			}
			ss = append(ss, s)
		}
		ss, notes := cleanSeries(ss, false, false)
		var cens []string
		for _, n := range sw.Strategies {
			if c := censored[n]; c > 0 {
				cens = append(cens, fmt.Sprintf("%s %d/%d", n, c, len(per[n])+c))
			}
		}
		if len(cens) > 0 {
			notes = append(notes, "not recovered, censored (curves stop below 1): "+strings.Join(cens, ", "))
		}
		var p *plot.Plot
		if len(ss) == 0 {
			p = emptyPlot(title, "no recovery time at this setting")
		} else {
			p = newPlot(title, "recovery time (ms)", "fraction of fault episodes", notes)
			p.Y.Min, p.Y.Max = 0, 1
			p.X.Min = 0
			if err := addSeries(p, ss, func(n string) seriesLook { return strategyLook(cdfName[n]) }, true); err != nil {
				return nil, err
			}
		}
		if err := add(single("recovery-cdf", title, notes, p)); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

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
