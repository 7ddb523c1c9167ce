package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// The liveness phase and the figure checks of a soak run
// (docs/reliability.md, "Liveness" and "Figures").

const (
	// InvLiveness: once the last fault has healed, and while a core of
	// hosts is up (every fragment keeps a host that did not crash), every
	// output the failure-free run produced from inputs emitted
	// SoakLivenessReach after the heal arrives, with any value, before the
	// run ends (at least SoakLivenessBound after the heal). Every strategy,
	// amnesia included: a strategy may lose data, it may not stall.
	InvLiveness = "liveness"
	// InvFigures: the run's own figures agree with its trace: not
	// recovered exactly when output did not resume; a recovery time never
	// before the fault nor after the run's end; lost inputs within what
	// the sources emitted.
	InvFigures = "figures"
)

const (
	// SoakLivenessReach is how long after the last heal the core may take
	// to serve its inputs again: five detector timeouts (1 s with the
	// soak's 200 ms), which cover a detection (timeout + heartbeat), the
	// takeover's probe (100 ms), a route query (300 ms) and two resume
	// retries (100 + 200 ms). Inputs emitted before it may be lost by a
	// strategy that keeps nothing.
	SoakLivenessReach = time.Second
	// SoakLivenessBound is how long every swarm run lasts after its last
	// fault heals: the reach plus the soak's 2 s drain. The swarm extends
	// a run's drain so that it fits.
	SoakLivenessBound = SoakLivenessReach + soakDrain
)

// coreUp reports whether, once every pause and partition has ended, each
// fragment still has a host that did not crash and at least half of the
// deployment's hosts did not crash, and if not, why. With fewer than half
// alive no host may take over by design: the detector cannot tell those
// crashes from a partition that leaves the primary serving on the other,
// larger side (docs/reliability.md, rule 13).
func coreUp(e *experiment.Experiment, replicas int) (bool, string) {
	crashed := map[string]bool{}
	for _, f := range e.Faults {
		if f.Crash != "" {
			crashed[f.Crash] = true
		}
	}
	hosts := 1 + e.Source.Streams // the sources and the sink
	down := 0
	for i, n := range e.Nodes {
		alive := false
		for _, h := range e.FragHosts(i, replicas) {
			hosts++
			if crashed[h] {
				down++
			} else {
				alive = true
			}
		}
		if !alive {
			return false, n.Name + " lost every host"
		}
	}
	if 2*(hosts-down) < hosts {
		return false, fmt.Sprintf("%d of the %d hosts crashed", down, hosts)
	}
	return true, ""
}

// Liveness is the outcome of the liveness check of one run.
type Liveness struct {
	// Checked reports whether the core was up after the last heal.
	Checked bool
	// From is the event time from which outputs must arrive.
	From time.Duration
	// Expected and Missing count the failure-free outputs from inputs at
	// or after From, and those that never arrived.
	Expected, Missing int
	// FirstMissing describes the earliest missing output.
	FirstMissing string
	// RenumberedIDs counts expected outputs that arrived (same key and
	// event time) under another id: a running sum restarted empty numbers
	// its outputs per key from one again.
	RenumberedIDs int
}

// Resumed reports whether output resumed: the check applied, found
// outputs to expect, and all of them arrived.
func (l Liveness) Resumed() bool { return l.Checked && l.Expected > 0 && l.Missing == 0 }

// Stalled reports whether output did not resume.
func (l Liveness) Stalled() bool { return l.Checked && l.Missing > 0 }

// checkLiveness compares the failure-free run's outputs from inputs after
// the heal with what the faulty run delivered.
func checkLiveness(e *experiment.Experiment, query string, replicas int, ref, faulty *ha.Trace) Liveness {
	var l Liveness
	if ok, _ := coreUp(e, replicas); !ok {
		return l
	}
	l.Checked = true
	l.From = lastHeal(e.Faults) + SoakLivenessReach + spanOf(query)
	// Outputs are matched by key and event time, not by id: a running
	// sum numbers its outputs per key, and a fragment restarted empty
	// numbers them again from one, so its outputs come under other ids
	// (with other values, which the liveness phase accepts).
	type slot struct {
		key uint32
		t   int64
	}
	got := map[slot]int{}
	ids := map[ha.OutputID]bool{}
	for _, d := range faulty.Deliveries().All() {
		if time.Duration(d.Tuple.Time) >= l.From {
			got[slot{d.Tuple.Key, d.Tuple.Time}]++
			ids[d.Tuple.ID] = true
		}
	}
	seen := map[ha.OutputID]bool{}
	for _, d := range ref.Deliveries().All() {
		if time.Duration(d.Tuple.Time) < l.From || seen[d.Tuple.ID] {
			continue
		}
		seen[d.Tuple.ID] = true
		l.Expected++
		k := slot{d.Tuple.Key, d.Tuple.Time}
		if got[k] > 0 {
			got[k]--
			if !ids[d.Tuple.ID] {
				l.RenumberedIDs++
			}
			continue
		}
		if l.Missing == 0 {
			l.FirstMissing = fmt.Sprintf("%s at event time %s (delivered at %s in the failure-free run)", d.Tuple.ID, time.Duration(d.Tuple.Time), d.T)
		}
		l.Missing++
	}
	return l
}

// CheckFigures checks a run's reported figures against what its trace
// shows: rec is the run's recovery, fault the first fault's time (ok false
// when nothing failed), end the run's end, emitted the source tuples and
// live the liveness outcome. Each broken rule is one line.
func CheckFigures(rec metrics.Recovery, fault time.Duration, ok bool, end time.Duration, emitted int64, live Liveness) []string {
	var bad []string
	if rec.LostInputs < 0 || rec.LostInputs > emitted {
		bad = append(bad, fmt.Sprintf("%d lost inputs, but the sources emitted %d", rec.LostInputs, emitted))
	}
	if rec.RecoveryMs != nil {
		at := fault + time.Duration(*rec.RecoveryMs*float64(time.Millisecond))
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("a recovery time of %.1f ms, but nothing failed", *rec.RecoveryMs))
		case *rec.RecoveryMs < 0:
			bad = append(bad, fmt.Sprintf("a recovery time of %.1f ms: before the fault at %s", *rec.RecoveryMs, fault))
		case at > end:
			bad = append(bad, fmt.Sprintf("recovered at %s (%.1f ms after the fault at %s), after the run's end at %s", at, *rec.RecoveryMs, fault, end))
		}
	}
	if rec.RecoveryMs != nil && rec.NotRecovered {
		bad = append(bad, "both a recovery time and not recovered")
	}
	if live.Stalled() && !rec.NotRecovered {
		bad = append(bad, fmt.Sprintf("output did not resume (%d of %d outputs after %s never arrived) but the run reports %s",
			live.Missing, live.Expected, live.From, recoveredText(rec)))
	}
	// Recovery is judged by output id: outputs that came back under other
	// ids (renumbered) never count as recovered, so only runs whose ids
	// came back are held to this rule.
	if live.Resumed() && live.RenumberedIDs == 0 && rec.NotRecovered && rec.Outstanding == 0 {
		bad = append(bad, "not recovered with nothing outstanding, though output resumed")
	}
	return bad
}

func recoveredText(rec metrics.Recovery) string {
	if rec.RecoveryMs != nil {
		return fmt.Sprintf("a recovery time of %.1f ms", *rec.RecoveryMs)
	}
	return "no recovery time and not 'not recovered'"
}

// checkLive runs the liveness and figure checks on a finished run.
func (res *SoakResult) checkLive(replicas int, ref, faulty *ha.Trace) {
	e := res.Case.Experiment
	res.Live = checkLiveness(e, res.Case.Query, replicas, ref, faulty)
	if res.Live.Stalled() {
		res.violate(InvLiveness, "output did not resume: %d of the %d outputs the failure-free run produced from inputs after %s never arrived by the end at %s (first: %s); the last fault healed at %s and every fragment kept a host",
			res.Live.Missing, res.Live.Expected, res.Live.From, e.End(), res.Live.FirstMissing, lastHeal(e.Faults))
	}
	fault, ok := worstEpisodeStart(res.Recovery)
	// Lost inputs beyond the emitted ones are the lost-bounded invariant's.
	if bad := CheckFigures(res.Recovery, fault, ok, e.End(), max(res.Emitted, res.Recovery.LostInputs), res.Live); len(bad) > 0 {
		res.violate(InvFigures, "%s", strings.Join(bad, "; "))
	}
}

// worstEpisodeStart is the start of the episode whose recovery the run
// reports (the worst: not recovered, else the longest recovery), and
// whether any fault episode happened. Every fault kind opens an episode,
// link faults included, and each recovery is timed from its own start.
func worstEpisodeStart(rec metrics.Recovery) (time.Duration, bool) {
	if len(rec.Episodes) == 0 {
		return 0, false
	}
	w := rec.Episodes[0]
	for _, ep := range rec.Episodes[1:] {
		switch {
		case w.NotRecovered:
		case ep.NotRecovered:
			w = ep
		case ep.RecoveryMs != nil && (w.RecoveryMs == nil || *ep.RecoveryMs > *w.RecoveryMs):
			w = ep
		}
	}
	return time.Duration(w.StartMs * float64(time.Millisecond)), true
}
