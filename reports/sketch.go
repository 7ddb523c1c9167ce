package reports

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// The comparison figures put every strategy of a run on one axis. A run
// directory draws a strategy's figures as soon as its run is classified
// and never keeps two traces, so each run leaves a sketch: its latencies
// near the faults, thinned, and the instants the comparison marks.

// sketchBefore and sketchAfter bound, around each fault, the deliveries a
// sketch keeps (s); the comparison zooms into them.
const (
	sketchBefore = 5.0
	sketchAfter  = 30.0
)

// episodeGap separates fault episodes: a fault more than this after the
// previous one (s) starts a new episode.
const episodeGap = 2.0

// maxEpisodes bounds the episodes the comparison figure shows, one panel
// pair each.
const maxEpisodes = 4

// fault is one injected fault of a run: [t, end] in seconds (end = t for
// a crash, whose host does not come back).
type fault struct {
	t, end float64
	what   string
	// last is, for a fault seen at several instants (each strategy's real
	// run), the latest; 0 otherwise.
	last float64
}

// at says when the fault happened: "4.17 s", or "4.17–4.18 s" in runs
// where it came at different instants.
func (f fault) at() string {
	if f.last > f.t+0.005 {
		return fmt.Sprintf("%.2f–%.2f s", f.t, f.last)
	}
	return fmt.Sprintf("%.2f s", f.t)
}

// mark is one instant of a strategy's run the comparison marks.
type mark struct {
	kind markKind
	t    float64 // s
}

type markKind int

const (
	markDetect markKind = iota
	markTakeover
	markCaughtUp
	markRecovered
)

// runSketch is what the comparison figures keep of one strategy's run.
type runSketch struct {
	strategy string
	rec      metrics.Recovery
	faults   []fault
	lat      plotter.XYs // (delivery s, latency ms) near the faults
	marks    []mark
	end      float64 // the last delivery (s)
}

// sketchRun keeps of a classified run what the comparison figures draw.
func sketchRun(run metrics.FaultyRun) runSketch {
	s := runSketch{strategy: run.Strategy, rec: run.Recovery, faults: faultsOf(run.Trace)}
	s.lat = latenciesNear(run.Trace, s.faults)
	if last, ok := run.Trace.Deliveries().Last(); ok {
		s.end = last.T.Seconds()
	}
	for _, e := range run.Trace.Events() {
		switch e.Kind {
		case ha.EvDetect:
			s.marks = append(s.marks, mark{markDetect, e.T.Seconds()})
		case ha.EvTakeover:
			s.marks = append(s.marks, mark{markTakeover, e.T.Seconds()})
		case ha.EvCaughtUp:
			s.marks = append(s.marks, mark{markCaughtUp, e.T.Seconds()})
		}
	}
	for _, ep := range run.Recovery.Episodes {
		if ep.RecoveryMs != nil {
			s.marks = append(s.marks, mark{markRecovered, (ep.StartMs + *ep.RecoveryMs) / 1e3})
		}
	}
	return s
}

// episodeAt is the run's fault episode (metrics.Episode) that begins
// within [from, to] seconds, if any: each is timed from its own start.
func (s runSketch) episodeAt(from, to float64) (metrics.Episode, bool) {
	for _, ep := range s.rec.Episodes {
		if t := ep.StartMs / 1e3; t >= from-1e-9 && t <= to {
			return ep, true
		}
	}
	return metrics.Episode{}, false
}

// faultsOf lists a trace's faults in order: crashes, pauses (to their
// resume) and partitions (to their heal).
func faultsOf(tr *ha.Trace) []fault {
	var fs []fault
	open := -1 // the partition not healed yet
	for _, e := range tr.Events() {
		t := e.T.Seconds()
		switch e.Kind {
		case ha.EvCrash:
			fs = append(fs, fault{t: t, end: t, what: "crash " + e.Host})
		case ha.EvPause:
			fs = append(fs, fault{t: t, end: t + time.Duration(e.N).Seconds(), what: "pause " + e.Host})
		case ha.EvPartition:
			fs = append(fs, fault{t: t, end: t, what: "partition"})
			open = len(fs) - 1
		case ha.EvHeal:
			if open >= 0 {
				fs[open].end = t
				open = -1
			}
		}
	}
	return fs
}

// latenciesNear is the trace's deliveries from sketchBefore before each
// fault to sketchAfter after it, as (s, latency ms), each fault's span
// thinned to maxPoints (latency peaks kept).
func latenciesNear(tr *ha.Trace, fs []fault) plotter.XYs {
	ds := tr.Deliveries()
	if ds.Len() == 0 || len(fs) == 0 {
		return nil
	}
	var spans [][2]float64
	for _, f := range fs {
		lo, hi := f.t-sketchBefore, f.end+sketchAfter
		if n := len(spans); n > 0 && lo <= spans[n-1][1] {
			spans[n-1][1] = math.Max(spans[n-1][1], hi)
			continue
		}
		spans = append(spans, [2]float64{lo, hi})
	}
	r := ds.Reader()
	var out plotter.XYs
	i := 0
	for _, sp := range spans {
		for i < ds.Len() && r.At(i).T.Seconds() < sp[0] {
			i++
		}
		from := i
		for i < ds.Len() && r.At(i).T.Seconds() <= sp[1] {
			i++
		}
		out = append(out, thinMax(i-from, maxPoints, func(k int) plotter.XY {
			d := r.At(from + k)
			return plotter.XY{X: d.T.Seconds(), Y: float64(d.Latency()) / 1e6}
		})...)
	}
	return out
}

// episode is a group of faults close in time, drawn as one panel.
type episode struct {
	faults []fault
	// from, to is the time range of the marks (s), latFrom, latTo the
	// wider one of the latency panel (several outputs either side).
	from, to       float64
	latFrom, latTo float64
}

// start and end of the faults of an episode.
func (e episode) start() float64 { return e.faults[0].t }
func (e episode) end() float64 {
	m := 0.0
	for _, f := range e.faults {
		m = math.Max(m, f.end)
	}
	return m
}

// episodesOf groups the faults of a run's sketches and chooses each
// episode's zoom: from shortly before the fault to a little after the
// last strategy's last mark in it (its recovery, or its last catch-up),
// so that marks tens of milliseconds apart stay apart.
func episodesOf(sks []runSketch) []episode {
	// The same fault in each strategy's run is one fault: at one instant
	// in simulated runs, some milliseconds apart in real ones (from its
	// first to its last occurrence).
	var fs []fault
	for _, s := range sks {
		for _, f := range s.faults {
			i := slices.IndexFunc(fs, func(g fault) bool { return g.what == f.what && math.Abs(g.t-f.t) <= episodeGap/4 })
			if i < 0 {
				fs = append(fs, f)
				continue
			}
			instant := fs[i].end == fs[i].t && f.end == f.t // a crash
			fs[i].last = math.Max(math.Max(fs[i].last, fs[i].t), f.t)
			fs[i].t = math.Min(fs[i].t, f.t)
			fs[i].end = math.Max(fs[i].end, f.end)
			if instant {
				fs[i].end = fs[i].t
			}
		}
	}
	slices.SortStableFunc(fs, func(a, b fault) int { return cmpFloat(a.t, b.t) })
	var eps []episode
	for _, f := range fs {
		if n := len(eps); n > 0 && f.t-eps[n-1].end() <= episodeGap {
			eps[n-1].faults = append(eps[n-1].faults, f)
			continue
		}
		eps = append(eps, episode{faults: []fault{f}})
	}
	runEnd := 0.0
	for _, s := range sks {
		runEnd = math.Max(runEnd, s.end)
	}
	for i := range eps {
		e := &eps[i]
		limit := e.end() + sketchAfter
		if i+1 < len(eps) {
			limit = math.Min(limit, eps[i+1].start())
		}
		last := e.end()
		for _, s := range sks {
			for _, m := range s.marks {
				if m.t >= e.start() && m.t <= limit {
					last = math.Max(last, m.t)
				}
			}
			// The highest latency after the fault is in view too, when
			// it stands out of the latency before the fault.
			before, peak := 0.0, plotter.XY{}
			for _, p := range s.lat {
				switch {
				case p.X < e.start() && p.X >= e.start()-sketchBefore:
					before = math.Max(before, p.Y)
				case p.X >= e.start() && p.X <= limit && p.Y > peak.Y:
					peak = p
				}
			}
			if peak.Y > 2*before {
				last = math.Max(last, peak.X)
			}
		}
		span := math.Max(last-e.start(), 0.2)
		e.from = math.Max(0, e.start()-math.Max(0.1, 0.25*span))
		e.to = math.Min(math.Min(limit, runEnd), last+0.3*span)
		if e.to <= e.start() {
			e.to = e.start() + span
		}
		// The latency panel reaches two of the widest gaps between
		// outputs before the fault either side, so that windowed outputs
		// delivered once a second still show.
		reach := math.Min(math.Max(2*outputGap(sks, e.start()), 0.5), sketchBefore)
		e.latFrom = math.Max(0, math.Min(e.from, e.start()-reach))
		e.latTo = math.Min(math.Min(limit, runEnd), math.Max(e.to, last)+reach)
		e.latTo = math.Max(e.latTo, e.to)
	}
	return eps
}

// outputGap is the widest gap between consecutive outputs of any
// strategy in the sketched time before t (s).
func outputGap(sks []runSketch, t float64) float64 {
	g := 0.0
	for _, s := range sks {
		prev := math.NaN()
		for _, p := range s.lat {
			if p.X >= t {
				break
			}
			if p.X >= t-sketchBefore && !math.IsNaN(prev) {
				g = math.Max(g, p.X-prev)
			}
			prev = p.X
		}
	}
	return g
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
