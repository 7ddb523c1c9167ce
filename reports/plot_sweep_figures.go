package reports

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha/metrics"
)

// SweepFigures renders the sweep plots: recovery time vs the first swept
// parameter (95 % confidence bars over seeds), overhead (CPU, bytes,
// memory) vs the parameter, the overhead/recovery trade-off scatter, and
// the CDF of recovery time per fault episode at the representative setting.
func SweepFigures(sw *experiment.Sweep, points []PointResult) ([]Figure, error) {
	sp := newSweepPlot(sw, points)
	var figs []Figure
	for _, draw := range []func() (Figure, error){sp.recoveryFigure, sp.overheadFigure, sp.tradeoffFigure, sp.recoveryCDF} {
		f, err := draw()
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// sweepPlot is what every sweep figure draws from: the aggregated rows,
// the axis of the first swept parameter and the series' names and looks.
type sweepPlot struct {
	sw      *experiment.Sweep
	points  []PointResult
	rows    []SweepRow
	ax      paramAxis
	stem    string // the parameter's name as it appears in file names
	names   []string
	colorOf func(string) seriesLook
	logX    bool
}

func newSweepPlot(sw *experiment.Sweep, points []PointResult) *sweepPlot {
	rows := Aggregate(points)
	ax := newParamAxis(sw.Params[0].Name, sw.Params[0].Values)
	names := seriesNames(sw, rows)
	return &sweepPlot{
		sw: sw, points: points, rows: rows, ax: ax,
		stem:    sanitizeName(sw.Params[0].Name),
		names:   names,
		colorOf: sweepLook(names),
		logX:    ax.kind != axisCategory && wantLog(ax.pos),
	}
}

// build makes one series per strategy (and setting of the other swept
// parameters) of get's mean and 95 % CI against the first parameter.
func (sp *sweepPlot) build(get func(SweepRow) Stat) []series {
	byName := map[string]*series{}
	for _, r := range sp.rows {
		n := seriesName(sp.sw, r)
		s, ok := byName[n]
		if !ok {
			s = &series{Name: n}
			byName[n] = s
		}
		st := get(r)
		s.XY = append(s.XY, plotter.XY{X: sp.ax.x(r.Values[0]), Y: st.meanOrNaN()})
		s.Err = append(s.Err, st.CI95)
	}
	out := make([]series, 0, len(sp.names))
	for _, n := range sp.names {
		if s, ok := byName[n]; ok {
			sortByX(s)
			out = append(out, *s)
		}
	}
	return out
}

// recoveryFigure is recovery time vs the parameter; the seeds that did
// not recover are crosses, never averaged in.
func (sp *sweepPlot) recoveryFigure() (Figure, error) {
	title := "Recovery time vs " + sp.ax.name + " (mean, 95 % CI over seeds)"
	nr := notRecoveredSeries(sp.sw, sp.rows, sp.ax)
	ss, notes := cleanSeries(dropNotRecovered(sp.build(func(r SweepRow) Stat { return r.RecoveryMs }), nr), sp.logX, false)
	if len(nr) > 0 {
		notes = append(notes, "× = seeds not recovered by the end of the run, at the time observed; never averaged")
	}
	p, err := lineFigure(title, sp.ax, sp.logX, "recovery time (ms)", ss, notes, sp.colorOf, "no strategy has a recovery time (no fault, or no run recovered)")
	if err != nil {
		return Figure{}, err
	}
	if len(nr) > 0 {
		if len(ss) == 0 { // every run failed to recover: draw them on a fresh plot
			p = newPlot(title, sp.ax.label(), "recovery time (ms)", notes)
			p.Y.Min = 0
		}
		if _, err := addNotRecovered(p, nr, sp.colorOf); err != nil {
			return Figure{}, err
		}
	}
	return single("recovery-vs-"+sp.stem, title, notes, p)
}

// overheadFigure is the failure-free runtime overhead (CPU, bytes sent,
// memory) vs the parameter, against no HA.
func (sp *sweepPlot) overheadFigure() (Figure, error) {
	title := "Runtime overhead vs " + sp.ax.name + " (failure-free run, against no HA)"
	var allNotes []string
	panel := func(t, y string, get func(SweepRow) Stat) (*plot.Plot, error) {
		ss, notes := cleanSeries(sp.build(get), sp.logX, false)
		allNotes = append(allNotes, prefixNotes(t, notes)...)
		return lineFigure(t, sp.ax, sp.logX, y, ss, notes, sp.colorOf, "no "+t+" figure")
	}
	cpu, err := panel("CPU", "CPU × no-HA", func(r SweepRow) Stat { return r.CPURatio })
	if err != nil {
		return Figure{}, err
	}
	byt, err := panel("bytes sent", "bytes × no-HA", func(r SweepRow) Stat { return r.BytesRatio })
	if err != nil {
		return Figure{}, err
	}
	mem, err := panel("memory", "peak queue (kB)", func(r SweepRow) Stat {
		s := r.PeakQueueBytes
		s.Mean, s.CI95, s.Min, s.Max = s.Mean/1e3, s.CI95/1e3, s.Min/1e3, s.Max/1e3
		return s
	})
	if err != nil {
		return Figure{}, err
	}
	// The three panels show the same series: one legend, on the last.
	for _, q := range []*plot.Plot{cpu, byt} {
		q.Legend = plot.NewLegend()
	}
	return grid("overhead-vs-"+sp.stem, title, allNotes, 12*vg.Inch, 4*vg.Inch, [][]*plot.Plot{{cpu, byt, mem}})
}

// tradeoffFigure is overhead vs recovery time, one point per strategy and
// setting.
func (sp *sweepPlot) tradeoffFigure() (Figure, error) {
	title := "Trade-off: overhead vs recovery time (one point per strategy and " + sp.ax.name + ")"
	// Settings where no seed recovered have no recovery time to plot:
	// say so by strategy instead of counting points without a value.
	never := map[string]int{}
	var neverNames []string
	for _, r := range sp.rows {
		if r.NotRecovered > 0 && r.RecoveryMs.N == 0 {
			n := seriesName(sp.sw, r)
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
		for _, r := range sp.rows {
			if r.NotRecovered > 0 && r.RecoveryMs.N == 0 {
				continue
			}
			n := seriesName(sp.sw, r)
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
		for _, n := range sp.names {
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
		return p, addSeries(p, ss, sp.colorOf, false)
	}
	a, err := panel("CPU overhead", "CPU × no-HA", func(r SweepRow) Stat { return r.CPURatio }, neverNote)
	if err != nil {
		return Figure{}, err
	}
	b, err := panel("network overhead", "bytes × no-HA", func(r SweepRow) Stat { return r.BytesRatio }, nil)
	if err != nil {
		return Figure{}, err
	}
	a.Legend = plot.NewLegend() // the same series as b's legend
	return grid("tradeoff-"+sp.stem, title, allNotes, 12*vg.Inch, 5*vg.Inch, [][]*plot.Plot{{a, b}})
}

// recoveryCDF is the CDF of recovery time per fault episode over the
// seeds at the representative setting.
func (sp *sweepPlot) recoveryCDF() (Figure, error) {
	rep := RepresentativeSetting(sp.sw)
	vals := sp.sw.SettingValues(rep)
	title := "CDF of recovery time per fault episode over " + fmt.Sprint(len(sp.sw.Seeds)) + " seeds at " + settingLabel(sp.sw, vals)
	per := map[string][]float64{}
	censored := map[string]int{} // episodes not recovered: the CDF never reaches them
	for _, p := range sp.points {
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
	for _, n := range sp.sw.Strategies {
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
	for _, n := range sp.sw.Strategies {
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
			return Figure{}, err
		}
	}
	return single("recovery-cdf", title, notes, p)
}
