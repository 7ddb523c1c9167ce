package metrics

import (
	"slices"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// recovery is what recoveryOf found: when the sink was back, or that it
// never was before the run ended.
type recovery struct {
	// at is the recovery time after the fault (valid when recovered).
	at time.Duration
	// recovered is false when the run ended first.
	recovered bool
	// observed is how long after the fault the run ended.
	observed time.Duration
	// behind is true when the sink was still delivering late output at
	// the end of the run: the strategy was catching up.
	behind bool
	// outstanding[d] marks expected id d as not yet delivered by a run
	// that ended while catching up (nil otherwise).
	outstanding []bool
}

// band is a run's normal sink latency and inter-output gap, from its own
// deliveries before the fault (docs/semantics.md, "How recovery time is
// found").
type band struct {
	// late is the latency above which a delivery is late: the 99th
	// percentile plus a tenth of the median, at least minSlack.
	late time.Duration
	// gap is the longest normal interval between two deliveries (≥ 1 ms).
	gap time.Duration
}

// minSlack is the least latency above the normal 99th percentile that
// makes a delivery late: differences below a millisecond are network
// jitter and scheduling, not a failure's doing.
const minSlack = time.Millisecond

// normalBand measures the band from obs's deliveries before the fault; a
// run with fewer than two of them borrows exp's (the failure-free run's).
func normalBand(exp, obs *ha.Deliveries, fault time.Duration) band {
	from := func(ds *ha.Deliveries, until time.Duration) (lat []time.Duration, gap time.Duration) {
		var prev time.Duration
		for i, d := range ds.All() {
			if d.T >= until {
				break
			}
			lat = append(lat, d.Latency())
			if i > 0 {
				gap = max(gap, d.T-prev)
			}
			prev = d.T
		}
		return lat, gap
	}
	lat, gap := from(obs, fault)
	if len(lat) < 2 {
		lat, gap = from(exp, 1<<62)
	}
	slices.Sort(lat)
	return band{
		late: sortedQuantile(lat, 0.99) + max(sortedQuantile(lat, 0.5)/10, minSlack),
		gap:  max(gap, time.Millisecond),
	}
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

// recoveryOf finds the recovery point of a faulty run (docs/semantics.md):
// the first moment after which every later expected output is delivered
// and the sink's latency stays within the run's own normal band, never
// before the last takeover after the fault caught up. The time is never
// shorter than the longest silence after the fault during which outputs
// were due.
func recoveryOf(exp, obs *ha.Deliveries, x classify.Index, faulty *ha.Trace, fault time.Duration) recovery {
	b := normalBand(exp, obs, fault)
	end := runEnd(faulty)
	r := recovery{observed: max(0, end-fault)}
	t := fault
	if at, ok := serviceRestored(faulty, fault); ok {
		t = max(t, at)
	}

	// Expected outputs: when each was due, and which were never delivered.
	delivered := make([]bool, len(x.First))
	var maxDeliveredEmit int64 = -1 << 62
	er := exp.Reader()
	for i := range obs.Len() {
		if id := x.Observed[i]; id >= 0 && !delivered[id] {
			delivered[id] = true
			// When the failure-free run emitted it: a restarted running
			// sum that delivers early ids late has not caught up.
			maxDeliveredEmit = max(maxDeliveredEmit, er.At(int(x.First[id])).Tuple.Emit)
		}
	}
	due := make([]time.Duration, 0, exp.Len())
	var missingDue time.Duration = -1
	for id, first := range x.First {
		e := time.Duration(er.At(int(first)).Tuple.Emit)
		if !delivered[id] {
			missingDue = max(missingDue, e)
		}
	}
	for _, d := range exp.All() {
		due = append(due, time.Duration(d.Tuple.Emit))
	}
	slices.Sort(due)
	dueIn := func(a, b time.Duration) bool { // some output was due in (a, b)
		i, _ := slices.BinarySearch(due, a+1)
		return i < len(due) && due[i] < b
	}

	// Silences after the fault longer than the normal gap while outputs
	// were due, and clusters of late deliveries: late deliveries less than
	// two normal gaps apart, with the in-band deliveries around them.
	type cluster struct {
		first, last time.Duration
		settledFor  time.Duration // in-band output before it since the previous cluster
		inBandAfter bool          // an in-band delivery follows before the next cluster
	}
	var (
		clusters []cluster
		prev                   = fault
		inBand   time.Duration = -1 // first in-band delivery since the last cluster
		lastT    time.Duration
		lastLate bool
		seen     bool
		silence  time.Duration // the longest silence while outputs were due
		// The late deliveries since the last in-band one: the time of the
		// previous one and the longest interval between two of them.
		prevLate time.Duration = -1
		lateGap  time.Duration
	)
	for _, d := range obs.All() {
		if d.T < fault {
			continue
		}
		seen = true
		// An output due in the silence that arrived within the band when
		// it ended was not kept waiting by the failure.
		if d.T-prev > b.gap && dueIn(prev, d.T-b.late) {
			silence = max(silence, d.T-prev)
		}
		prev = d.T
		late := d.Latency() > b.late
		n := len(clusters)
		switch {
		case late && n > 0 && d.T-clusters[n-1].last <= 2*b.gap:
			clusters[n-1].last = d.T
		case late:
			c := cluster{first: d.T, last: d.T}
			if inBand >= 0 {
				c.settledFor = d.T - inBand
			}
			clusters = append(clusters, c)
			inBand = -1
		default:
			if n > 0 {
				clusters[n-1].inBandAfter = true
			}
			if inBand < 0 {
				inBand = d.T
			}
		}
		lastT, lastLate = d.T, late
		if late {
			if prevLate >= 0 {
				lateGap = max(lateGap, d.T-prevLate)
			}
			prevLate = d.T
		} else {
			prevLate, lateGap = -1, 0
		}
	}
	// A lone outlier — a short burst after the sink had been in band for a
	// while, followed by in-band output and no other late output for a
	// while — does not move recovery; any other late cluster does.
	var lastCounted time.Duration = -1
	for i, c := range clusters {
		outlier := c.last-c.first < b.gap && c.settledFor >= 2*b.gap && c.inBandAfter &&
			(i+1 == len(clusters) || clusters[i+1].first-c.last >= 2*b.gap)
		if !outlier {
			lastCounted = c.last
		}
	}
	if lastCounted >= 0 {
		t = max(t, lastCounted)
	}
	if missingDue >= 0 {
		t = max(t, missingDue)
	}
	// Still delivering late output when the run ended — the last late
	// output came no later than its usual pace before the end: catching
	// up. A sink whose late output stopped long before is stuck.
	r.behind = seen && lastLate && lastCounted == lastT && end-lastT <= 2*max(b.gap, lateGap)
	switch {
	case missingDue >= 0 && missingDue >= fault && missingDue > time.Duration(maxDeliveredEmit):
		// Outputs were due after every output the sink delivered: it never
		// came back for them (or had not yet, when still catching up).
	default:
		r.recovered = true
		r.at = max(t-fault, silence)
		return r
	}
	if r.behind {
		r.outstanding = make([]bool, len(x.First))
		for id, first := range x.First {
			if !delivered[id] && er.At(int(first)).Tuple.Emit > maxDeliveredEmit {
				r.outstanding[id] = true
			}
		}
	}
	return r
}
