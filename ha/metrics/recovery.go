package metrics

import (
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// RecoveryOptions say what a faulty run's recovery is measured against
// (docs/semantics.md, "How recovery time is found").
type RecoveryOptions struct {
	// Own is the strategy's own failure-free run: every expected output is
	// due when it arrived there, plus the tolerance. Only its deliveries'
	// times and ids are read (a ha.NewTimingTrace is enough). nil means
	// the reference run O_e.
	Own *ha.Trace
	// Window is the episode window: a fault that begins no later than this
	// after the faults of an episode ended joins that episode. 0 means the
	// longest detection delay the faulty trace shows (a crash or pause to
	// its first detection), or DefaultEpisodeWindow without one.
	Window time.Duration
	// Tolerance, when positive, is how late against Own an output may
	// arrive and still be on time; 0 derives it from Own (Tolerance).
	// Simulated runs state it from the experiment (sim.RecoveryOptions).
	Tolerance time.Duration
	// Real selects the rules for real runs, where two executions never
	// match exactly: a wider tolerance (RealMinTolerance, twice the
	// spread) and lone late outputs after sustained on-time output
	// excused. A real run without Own is measured against its own
	// deliveries before the first fault (realStandIn).
	Real bool
}

// Tolerance bounds (docs/semantics.md). An output is late when it arrives
// more than the tolerance after the same output id did in the strategy's
// own failure-free run.
const (
	// SimTolerance is the least tolerance of a simulated run: its runs
	// are deterministic, so only a changed interleaving after the fault
	// moves an on-time output, by far less than this.
	SimTolerance = time.Millisecond
	// RealMinTolerance is the least tolerance of a real run.
	RealMinTolerance = 5 * time.Millisecond
	// SustainedOutputs is how many consecutive on-time outputs (in the
	// order the own failure-free run delivered them) make on-time output
	// "sustained" in a real run: a single late output right after that
	// many, followed by an on-time one, does not move the recovery.
	SustainedOutputs = 20
)

// Tolerance is how late against the own failure-free run own an output
// may arrive and still be on time: twice the spread of own's latencies
// (90th percentile minus median: robust to a few stalls) — a strategy's normal jitter, checkpoint
// pauses and release intervals, as two runs may each draw them — at least
// SimTolerance, or RealMinTolerance for a real run.
func Tolerance(own *ha.Deliveries, real bool) time.Duration {
	lat := make([]time.Duration, 0, own.Len())
	for _, d := range own.All() {
		lat = append(lat, d.Latency())
	}
	slices.Sort(lat)
	spread := sortedQuantile(lat, 0.9) - sortedQuantile(lat, 0.5)
	if real {
		return max(RealMinTolerance, 2*spread)
	}
	return max(SimTolerance, 2*spread)
}

// realStandIn stands in for the own failure-free run of a real run that
// has none: every expected output due at its emission time plus L, the
// median latency of the faulty run's deliveries before the first fault,
// and, as the tolerance, twice their spread (90th percentile minus
// median), at least RealMinTolerance. With fewer than SustainedOutputs
// deliveries before the fault, the reference run's latencies are used.
func realStandIn(exp, obs *ha.Deliveries, fault time.Duration) (*ha.Deliveries, time.Duration) {
	var lat []time.Duration
	for _, d := range obs.All() {
		if d.T >= fault {
			break
		}
		lat = append(lat, d.Latency())
	}
	if len(lat) < SustainedOutputs {
		lat = lat[:0]
		for _, d := range exp.All() {
			lat = append(lat, d.Latency())
		}
	}
	slices.Sort(lat)
	med := sortedQuantile(lat, 0.5)
	tol := max(RealMinTolerance, 2*(sortedQuantile(lat, 0.9)-med))
	own := &ha.Deliveries{}
	for _, d := range exp.All() {
		own.Append(ha.Delivery{T: time.Duration(d.Tuple.Emit) + med, Tuple: ha.Tuple{ID: d.Tuple.ID, Emit: d.Tuple.Emit, Time: d.Tuple.Emit}})
	}
	return own, tol
}

// never is the time of something that did not happen before the run ended.
const never time.Duration = -1

// timing is one expected output as recovery judges it.
type timing struct {
	id  int32         // its expected id (classify.Index numbering)
	key uint32        // its id's key: whose output came back
	own time.Duration // when it arrived in the own failure-free run
	// ownLat is its latency in the own failure-free run.
	ownLat time.Duration
	// arrived is its first delivery in the faulty run, never if none.
	arrived time.Duration
	// offEnd is when its lateness ended: its arrival when late, for a
	// missing output the arrival of the first later output of its key
	// (never when none came); 0 when on time.
	offEnd time.Duration
	late   bool // delivered after own + tolerance (and not excused)
	miss   bool // never delivered
}

func (t timing) bad() bool { return t.late || t.miss }

// timings is every expected output the own run delivered, in the order
// it delivered them, with its arrival in the faulty run.
func timings(exp, obs, own *ha.Deliveries, x classify.Index, ownIsExp bool) []timing {
	arrived := make([]time.Duration, len(x.First))
	for i := range arrived {
		arrived[i] = never
	}
	or := obs.Reader()
	for i := range obs.Len() {
		if id := x.Observed[i]; id >= 0 && arrived[id] == never {
			arrived[id] = or.At(i).T
		}
	}
	var ol ownLookup
	if !ownIsExp {
		ol = newOwnLookup(own)
	}
	ts := make([]timing, 0, len(x.First))
	er := exp.Reader()
	for id, first := range x.First {
		d := er.At(int(first))
		at, ok := d.T, true
		if !ownIsExp {
			at, ok = ol.find(d.Tuple.ID)
		}
		if ok { // an output the strategy never delivers even without faults is not timed
			ts = append(ts, timing{id: int32(id), key: d.Tuple.ID.Key, own: at, ownLat: at - time.Duration(d.Tuple.Emit), arrived: arrived[id]})
		}
	}
	slices.SortStableFunc(ts, func(a, b timing) int { return int(a.own - b.own) })
	return ts
}

// judge marks each output late, missing or on time against tol, and when
// its lateness ended: markLate, then excuseLoneLateness, then endAbsences.
func judge(ts []timing, tol time.Duration, real bool) {
	markLate(ts, tol)
	excuseLoneLateness(ts, tol, real)
	endAbsences(ts)
}

// markLate marks the outputs that never arrived missing and those that
// arrived after their own time plus tol late, their lateness ending at
// their arrival.
func markLate(ts []timing, tol time.Duration) {
	for i := range ts {
		t := &ts[i]
		t.miss = t.arrived == never
		t.late = !t.miss && t.arrived > t.own+tol
		if t.late {
			t.offEnd = t.arrived
		}
	}
}

// excuseLoneLateness clears lateness right after SustainedOutputs on-time
// outputs when it is one event: in a real run, one late output or one
// burst of late outputs arriving within tol of each other (the windows one
// event closes), followed by on-time output or by the end of the output;
// in a simulated run, one output at most twice the tolerance late and
// followed by an on-time one (after a re-interleaving the same id's timing
// jitters around the own run's).
func excuseLoneLateness(ts []timing, tol time.Duration, real bool) {
	run := 0 // on-time outputs in a row before i
	for i := 0; i < len(ts); {
		if !ts[i].bad() {
			run++
			i++
			continue
		}
		j := eventEnd(ts, i, tol, real)
		if ts[i].late && run >= SustainedOutputs && loneEvent(ts, i, j, tol, real) {
			for k := i; k <= j; k++ {
				ts[k].late, ts[k].offEnd = false, 0
			}
		}
		run = 0
		i = j + 1
	}
}

// eventEnd is the last output of the event that makes ts[i] bad: in a real
// run, the late outputs right after a late ts[i] arriving within tol of
// it; otherwise ts[i] alone.
func eventEnd(ts []timing, i int, tol time.Duration, real bool) int {
	j := i
	for real && ts[i].late && j+1 < len(ts) && ts[j+1].late && ts[j+1].arrived-ts[i].arrived <= tol && ts[i].arrived-ts[j+1].arrived <= tol {
		j++
	}
	return j
}

// loneEvent reports whether the late event ts[i..j] is followed by on-time
// output (or, in a real run, by the end of the output) and, in a simulated
// run, is at most twice the tolerance late.
func loneEvent(ts []timing, i, j int, tol time.Duration, real bool) bool {
	after := j+1 < len(ts) && !ts[j+1].bad()
	if real {
		return after || j+1 == len(ts)
	}
	return after && ts[i].arrived-ts[i].own <= 2*tol
}

// endAbsences ends a missing output's absence when a later output of its
// key arrives (never when none did): it scans backwards keeping the
// earliest arrival per key of outputs due strictly later.
func endAbsences(ts []timing) {
	next := map[uint32]time.Duration{}
	for i := len(ts) - 1; i >= 0; {
		j := i // ts[j+1..i] share one own time
		for j >= 0 && ts[j].own == ts[i].own {
			j--
		}
		for k := j + 1; k <= i; k++ {
			if ts[k].miss {
				ts[k].offEnd = never
				if at, ok := next[ts[k].key]; ok {
					ts[k].offEnd = at
				}
			}
		}
		for k := j + 1; k <= i; k++ {
			if a := ts[k].arrived; a != never {
				if at, ok := next[ts[k].key]; !ok || a < at {
					next[ts[k].key] = a
				}
			}
		}
		i = j
	}
}

// measureEpisodes computes each episode's recovery from the judged
// outputs. An output belongs to the last episode that began no later
// than it arrived in the own failure-free run (to the first when it
// arrived before any). An episode recovers at the latest end of its
// outputs' lateness, never before its detection; it does not recover
// when one of its outputs never arrived and no later output of that key
// came before the run's end. A key that comes back only after a later
// episode began brings its episode back then: the output alone cannot
// tell the two episodes' shares apart, and a recovery it did show is never
// hidden as "not recovered".
func measureEpisodes(trace *ha.Trace, spans []episodeSpan, ts []timing, obs, own *ha.Deliveries, end time.Duration) []Episode {
	eps := make([]Episode, len(spans))
	offEnd := make([]time.Duration, len(spans))
	stalled := make([]bool, len(spans))
	for k, sp := range spans {
		eps[k] = Episode{StartMs: ms(sp.start), EndMs: ms(sp.end), Faults: []string{}}
		for _, f := range sp.faults {
			eps[k].Faults = append(eps[k].Faults, f.label)
		}
		eps[k].DetectionMs = episodeDetection(trace, sp, nextStart(spans, k, end))
	}
	k := 0
	for _, t := range ts {
		for k+1 < len(spans) && spans[k+1].start <= t.own {
			k++
		}
		e := &eps[k]
		if t.arrived != never {
			e.MaxAddedLatencyMs = max(e.MaxAddedLatencyMs, ms(t.arrived-t.own))
		}
		switch {
		case t.miss:
			e.Missing++
			if t.offEnd == never {
				stalled[k] = true
			}
		case t.late:
			e.Late++
		}
		if t.bad() {
			offEnd[k] = max(offEnd[k], t.offEnd)
		}
	}
	normal := maxGap(own, own.LastTime())
	for k, sp := range spans {
		e := &eps[k]
		e.UnavailableMs = ms(max(0, longestSilence(obs, sp.start, min(nextStart(spans, k, end), own.LastTime()))-normal))
		if stalled[k] {
			e.NotRecovered, e.ObservedMs = true, ptr(ms(max(0, end-sp.start)))
			continue
		}
		rec := max(0, offEnd[k]-sp.start)
		if e.DetectionMs != nil {
			rec = max(rec, time.Duration(*e.DetectionMs*float64(time.Millisecond)))
		}
		e.RecoveryMs = ptr(ms(rec))
	}
	return eps
}

// nextStart is when episode k+1 begins, or def after the last episode.
func nextStart(spans []episodeSpan, k int, def time.Duration) time.Duration {
	if k+1 < len(spans) {
		return spans[k+1].start
	}
	return def
}

// longestSilence is the longest interval in [from, until] without a
// delivery in ds, counting from from and up to until.
func longestSilence(ds *ha.Deliveries, from, until time.Duration) time.Duration {
	if until <= from {
		return 0
	}
	prev, g := from, time.Duration(0)
	for _, d := range ds.All() {
		if d.T <= from {
			continue
		}
		if d.T > until {
			break
		}
		g, prev = max(g, d.T-prev), d.T
	}
	return max(g, until-prev)
}

// runEnd is when the run stopped: the time of its end-of-run counters,
// or else of its last event or delivery.
func runEnd(trace *ha.Trace) time.Duration {
	var end, stats time.Duration
	for _, e := range trace.Events() {
		end = max(end, e.T)
		if e.Kind == ha.EvStats {
			stats = max(stats, e.T)
		}
	}
	if last, ok := trace.Deliveries().Last(); ok {
		end = max(end, last.T)
	}
	if stats > 0 {
		return max(stats, end)
	}
	return end
}

// worst is the index of the episode whose figure the run reports: the
// first that did not recover, or else the one with the longest recovery.
func worst(eps []Episode) int {
	w := 0
	for k, e := range eps {
		switch {
		case e.NotRecovered:
			return k
		case *e.RecoveryMs > *eps[w].RecoveryMs:
			w = k
		}
	}
	return w
}

// outstandingOf marks, for a run that did not recover, the expected ids
// still to come when it ended while catching up: its last deliveries were
// late (latency above the same output's in the own run plus tol), and the
// last of them came no longer before the end than twice the longest
// interval between two of them (at least the own run's longest gap).
// Those due after every id delivered are then outstanding rather than
// missing. nil when the run was not catching up.
func outstandingOf(exp, obs, own *ha.Deliveries, x classify.Index, ts []timing, tol, end time.Duration) []bool {
	n := obs.Len()
	if n == 0 {
		return nil
	}
	ownLat := make([]time.Duration, len(x.First))
	for i := range ownLat {
		ownLat[i] = never
	}
	for _, t := range ts {
		ownLat[t.id] = t.ownLat
	}
	late := func(i int) bool {
		id := x.Observed[i]
		return id >= 0 && ownLat[id] != never && obs.At(i).Latency() > ownLat[id]+tol
	}
	pace := maxGap(own, own.LastTime())
	last := obs.At(n - 1).T
	i := n - 1
	for ; i > 0 && late(i) && late(i-1); i-- {
		pace = max(pace, obs.At(i).T-obs.At(i-1).T)
	}
	if !late(n-1) || end-last > 2*pace {
		return nil
	}
	delivered := make([]bool, len(x.First))
	var maxEmit int64 = -1 << 62
	er := exp.Reader()
	for i := range n {
		if id := x.Observed[i]; id >= 0 && !delivered[id] {
			delivered[id] = true
			maxEmit = max(maxEmit, er.At(int(x.First[id])).Tuple.Emit)
		}
	}
	out := make([]bool, len(x.First))
	for id, first := range x.First {
		out[id] = !delivered[id] && er.At(int(first)).Tuple.Emit > maxEmit
	}
	return out
}
