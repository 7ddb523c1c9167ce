package metrics

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// RecoveryOf computes the recovery figures of a faulty run against the
// failure-free reference run of the same experiment and seed, which also
// serves as the strategy's own failure-free run (RecoveryWith takes it).
func RecoveryOf(reference, faulty *ha.Trace) Recovery {
	r, _ := ClassifyRecoveryWith(reference, faulty, RecoveryOptions{})
	return r
}

// RecoveryWith is RecoveryOf with options: the strategy's own
// failure-free run, the episode window, real-run rules.
func RecoveryWith(reference, faulty *ha.Trace, o RecoveryOptions) Recovery {
	r, _ := ClassifyRecoveryWith(reference, faulty, o)
	return r
}

// ClassifyRecovery is RecoveryOf that also returns the classification the
// figures were computed from (each delivery's label and the id index), for
// callers that draw the deliveries without classifying them again.
func ClassifyRecovery(reference, faulty *ha.Trace) (Recovery, classify.Result) {
	return ClassifyRecoveryWith(reference, faulty, RecoveryOptions{})
}

// ClassifyRecoveryWith is ClassifyRecovery with options.
func ClassifyRecoveryWith(reference, faulty *ha.Trace, o RecoveryOptions) (Recovery, classify.Result) {
	exp, obs := reference.Deliveries(), faulty.Deliveries()
	c := Classify(exp, obs, Marks(faulty))
	r := Recovery{
		Type: c.Type, Subtype: c.Subtype, Missing: c.Missing, Duplicates: c.Duplicates,
		Wrong: c.Wrong, Spurious: c.Spurious,
		ConvergedAtMs: c.ConvergedAt, Explanations: c.Explanations,
		Delivered: obs.Len(), Expected: exp.Len(),
	}
	if r.Explanations == nil {
		r.Explanations = []string{}
	}
	x := c.Index
	r.Emitted = Emitted(reference)
	in := lostInputFigures(exp, obs, x, nil, r.Emitted)
	r.LostInputs, r.LostLineage, r.UnmatchedInputs = in.lost, in.lineage, in.unmatched
	end := runEnd(faulty)
	window := o.Window
	if window <= 0 {
		window = observedWindow(faulty)
	}
	spans := groupEpisodes(faultSpans(faulty, end), window)
	if len(spans) == 0 {
		return r, c
	}
	own, ownIsExp, tol, dueFrom := dueReference(exp, obs, spans[0].start, o)
	r.DueFrom = dueFrom
	ts := timings(exp, obs, own, x, ownIsExp)
	judge(ts, tol, o.Real)
	r.Episodes = measureEpisodes(faulty, spans, ts, obs, own, end)
	r.EpisodeCount, r.ToleranceMs = len(r.Episodes), ms(tol)
	w := r.Episodes[worst(r.Episodes)]
	r.DetectionMs = w.DetectionMs
	r.MaxAddedLatencyMs = maxAdded(exp, obs, x)
	r.UnavailableMs = unavailable(exp, obs)
	if !w.NotRecovered {
		r.RecoveryMs = w.RecoveryMs
		return r, c
	}
	r.NotRecovered, r.ObservedMs = true, w.ObservedMs
	if len(r.Episodes) > 1 { // name the episode that did not recover
		k := worst(r.Episodes)
		r.Explanations = append([]string{fmt.Sprintf("fault episode %d of %d (%s) did not recover: %d of its expected outputs were never delivered, and for some of their keys no later output came before the end of the run",
			k+1, len(r.Episodes), strings.Join(w.Faults, ", "), w.Missing)}, r.Explanations...)
	}
	if out := outstandingOf(exp, obs, own, x, ts, tol, end); out != nil {
		markOutstanding(&r, exp, obs, x, out)
	}
	return r, c
}

// dueReference chooses what every expected output is due against: the
// strategy's own failure-free run (o.Own), or else for a real run its own
// deliveries before the first fault (realStandIn), or else the reference
// run exp itself (ownIsExp); with the tolerance (o.Tolerance when set) and
// the name Recovery.DueFrom reports.
func dueReference(exp, obs *ha.Deliveries, firstFault time.Duration, o RecoveryOptions) (own *ha.Deliveries, ownIsExp bool, tol time.Duration, from string) {
	own, ownIsExp, tol, from = exp, o.Own == nil, o.Tolerance, "reference"
	switch {
	case !ownIsExp:
		own, from = o.Own.Deliveries(), "own"
	case o.Real:
		from = "pre-fault"
		// A real run measured without its own failure-free run: its
		// deliveries before the first fault stand in for it.
		var pre time.Duration
		own, pre = realStandIn(exp, obs, firstFault)
		ownIsExp = false
		if tol <= 0 {
			tol = pre
		}
	}
	if tol <= 0 {
		tol = Tolerance(own, o.Real)
	}
	return own, ownIsExp, tol, from
}

// markOutstanding counts the expected outputs still to come when a run
// that did not recover ended while catching up (out, from outstandingOf)
// as outstanding rather than missing, makes the run's type "not
// recovered", and counts the lost inputs again without them.
func markOutstanding(r *Recovery, exp, obs *ha.Deliveries, x classify.Index, out []bool) {
	n := 0
	for _, o := range out {
		if o {
			n++
		}
	}
	if n == 0 {
		return
	}
	r.Outstanding, r.Missing = n, r.Missing-n
	r.Type, r.Subtype = NotRecoveredType, ""
	in := lostInputFigures(exp, obs, x, out, r.Emitted)
	r.LostInputs, r.LostLineage = in.lost, in.lineage
}
