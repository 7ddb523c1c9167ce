package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
)

// CheckRecovery checks the invariants every recovery figure r of the
// faulty run must meet (docs/semantics.md, "Invariants"), reading the
// traces directly rather than trusting r's own reasoning; o must be the
// options r was computed with. It returns every violation found, joined,
// or nil:
//   - the run's figures are those of its worst episode, and it did not
//     recover exactly when one of its episodes did not;
//   - a recovered episode's recovery is at least its detection, at most
//     the run's end, and (simulated runs) at least every silence after
//     its start during which one of its outputs was missing more than
//     twice the tolerance after it was due;
//   - an episode does not recover exactly when one of its outputs never
//     came and no later output of the same key came before the run's
//     end;
//   - an episode with no late or missing output recovers no later than
//     its detection or its largest added latency plus the tolerance.
func CheckRecovery(r Recovery, reference, faulty *ha.Trace, o RecoveryOptions) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(r.Episodes) != r.EpisodeCount {
		bad("episode_count %d but %d episodes", r.EpisodeCount, len(r.Episodes))
	}
	if len(r.Episodes) == 0 {
		if r.RecoveryMs != nil || r.NotRecovered {
			bad("a recovery figure without a fault episode")
		}
		return errors.Join(errs...)
	}
	checkWorst(r, bad)
	own := reference.Deliveries()
	switch {
	case o.Own != nil:
		own = o.Own.Deliveries()
	case o.Real:
		own, _ = realStandIn(reference.Deliveries(), faulty.Deliveries(), dur(r.Episodes[0].StartMs))
	}
	outs := checkOutputs(reference.Deliveries(), own, faulty.Deliveries())
	end := runEnd(faulty)
	tol := time.Duration(r.ToleranceMs * float64(time.Millisecond))
	for k, e := range r.Episodes {
		start := dur(e.StartMs)
		next := end + 1
		if k+1 < len(r.Episodes) {
			next = dur(r.Episodes[k+1].StartMs)
		}
		first := k == 0
		stall := false
		for _, c := range outs {
			if c.arrived == never && (c.own >= start || first) && c.own < next && !c.cameBackBefore(end+1) {
				stall = true
				break
			}
		}
		if stall != e.NotRecovered {
			bad("episode %d (%s): not_recovered %v, but output that never came back: %v", k+1, e.Faults, e.NotRecovered, stall)
		}
		if e.NotRecovered {
			if e.RecoveryMs != nil {
				bad("episode %d: not recovered with recovery_ms %.3f", k+1, *e.RecoveryMs)
			}
			continue
		}
		if e.RecoveryMs == nil {
			bad("episode %d: recovered without recovery_ms", k+1)
			continue
		}
		rec := *e.RecoveryMs
		const eps = 1e-6
		if e.DetectionMs != nil && rec < *e.DetectionMs-eps {
			bad("episode %d: recovery %.3f ms before its detection %.3f ms", k+1, rec, *e.DetectionMs)
		}
		if rec > ms(end-start)+eps {
			bad("episode %d: recovery %.3f ms after the run's end (%.3f ms)", k+1, rec, ms(end-start))
		}
		if !o.Real { // a simulated run excuses a lone output at most 2×tol late
			if s := dueSilence(outs, faulty.Deliveries(), start, next, 2*tol, first); rec < ms(s)-eps {
				bad("episode %d: recovery %.3f ms below a silence of %.3f ms while its output was due", k+1, rec, ms(s))
			}
		}
		if e.Late == 0 && e.Missing == 0 {
			limit := e.MaxAddedLatencyMs + r.ToleranceMs
			if e.DetectionMs != nil {
				limit = max(limit, *e.DetectionMs)
			}
			if rec > limit+eps {
				bad("episode %d: nothing late or missing, yet recovery %.3f ms > %.3f ms", k+1, rec, limit)
			}
		}
	}
	return errors.Join(errs...)
}

// checkWorst checks that r's run-level figures are its worst episode's.
func checkWorst(r Recovery, bad func(string, ...any)) {
	anyNot := false
	worstMs := math.Inf(-1)
	for _, e := range r.Episodes {
		anyNot = anyNot || e.NotRecovered
		if e.RecoveryMs != nil {
			worstMs = max(worstMs, *e.RecoveryMs)
		}
	}
	switch {
	case anyNot != r.NotRecovered:
		bad("not_recovered %v, but an episode did not recover: %v", r.NotRecovered, anyNot)
	case anyNot && r.RecoveryMs != nil:
		bad("not recovered with recovery_ms %.3f", *r.RecoveryMs)
	case !anyNot && (r.RecoveryMs == nil || *r.RecoveryMs != worstMs):
		bad("recovery_ms is not the worst episode's %.3f", worstMs)
	}
}

// checkOutput is one expected output as CheckRecovery sees it.
type checkOutput struct {
	key     uint32
	own     time.Duration // in the own failure-free run
	arrived time.Duration // first arrival in the faulty run, never if none
	// back is the earliest arrival of a later output (own-run order) of
	// the same key, never if none.
	back time.Duration
}

func (c checkOutput) cameBackBefore(t time.Duration) bool { return c.back != never && c.back < t }

// checkOutputs pairs every expected output id the own run delivered with
// its first arrival in the faulty run, by id.
func checkOutputs(exp, own, obs *ha.Deliveries) []checkOutput {
	ownAt, arr := firstTimes(own), firstTimes(obs)
	var outs []checkOutput
	for _, e := range firstTimes(exp) {
		at, ok := lookupFirst(ownAt, e.id)
		if !ok {
			continue
		}
		a, ok := lookupFirst(arr, e.id)
		if !ok {
			a = never
		}
		outs = append(outs, checkOutput{key: e.id.Key, own: at, arrived: a})
	}
	slices.SortStableFunc(outs, func(a, b checkOutput) int { return int(a.own - b.own) })
	back := map[uint32]time.Duration{}      // earliest arrival of outputs after the current own time
	afterLast := map[uint32]time.Duration{} // per key, the earliest arrival due after its last output
	backAny := never                        // earliest arrival of any output after the current own time
	for i := len(outs) - 1; i >= 0; {
		j := i
		for j >= 0 && outs[j].own == outs[i].own {
			j--
		}
		for k := j + 1; k <= i; k++ {
			key := outs[k].key
			if _, ok := afterLast[key]; !ok {
				afterLast[key] = backAny
			}
			outs[k].back = afterLast[key] // none of the key's later outputs came
			if at, ok := back[key]; ok {
				outs[k].back = at
			}
		}
		for k := j + 1; k <= i; k++ {
			if a := outs[k].arrived; a != never {
				if at, ok := back[outs[k].key]; !ok || a < at {
					back[outs[k].key] = a
				}
				if backAny == never || a < backAny {
					backAny = a
				}
			}
		}
		i = j
	}
	return outs
}

// dueSilence is the longest interval without a delivery, from start (or
// a later delivery) to the next delivery (or the run's last due time),
// during which an output of the episode — in the own run between start
// (any time, for the first episode) and next — was due (own time plus
// tol before the interval ended) and had not arrived (nor, for one that
// never arrived, a later output of its key).
func dueSilence(outs []checkOutput, obs *ha.Deliveries, start, next, tol time.Duration, first bool) time.Duration {
	// Sweep the silences in time order, taking in the outputs due before
	// each silence ended; one of them is missing over the silence when
	// the latest arrival among them is not before its end.
	var s time.Duration
	latest := time.Duration(math.MinInt64) // the latest arrival of the outputs taken in
	i := 0
	prev := start
	for _, d := range obs.All() {
		if d.T <= start {
			continue
		}
		for ; i < len(outs) && outs[i].own+tol < d.T; i++ {
			c := outs[i]
			if (c.own >= start || first) && c.own < next {
				switch { // a lost output stops being missed when its key's output came back
				case c.arrived != never:
					latest = max(latest, c.arrived)
				case c.back != never:
					latest = max(latest, c.back)
				default:
					latest = math.MaxInt64
				}
			}
		}
		if latest >= d.T {
			s = max(s, d.T-prev)
		}
		prev = d.T
	}
	return s
}

func dur(msf float64) time.Duration {
	return time.Duration(math.Round(msf * float64(time.Millisecond)))
}
