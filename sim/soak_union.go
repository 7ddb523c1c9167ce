package sim

import (
	"math"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// On a union with its interleaving decisions logged or shipped, the
// precise promise covers the input the failed primary processed: no
// output missing or repeated, no input lost (docs/reliability.md). Input
// it never processed the successor interleaves in its own arrival order,
// a new valid interleaving, and an event-time window behind the union
// drops as late whatever that order puts behind its watermark — not what
// the failure-free run's order dropped (its own unmatched tuples). A
// window that starts after the union's fragment first failed holds only
// such input: its shortfall is a value the promise lets differ, not a
// lost input of the promise. unionCoveredLoss counts the rest.

// unionCoveredLoss is the source tuples missing from the outputs of out
// (against ref) that the union promise covers: every output when the
// query's outputs are not all event-time windows (ok false: the caller
// keeps the run's lost-inputs figure), else the windows that start
// before the union's fragment first fails.
func unionCoveredLoss(e *experiment.Experiment, ref, out *ha.Trace) (lost int64, ok bool) {
	failAt := unionFailureAt(e)
	want := map[ha.OutputID]uint32{}
	for _, d := range ref.Deliveries().All() {
		if d.Tuple.ID.Kind != ha.IDWindow {
			return 0, false
		}
		want[d.Tuple.ID] = d.Tuple.Lineage.N
	}
	got := map[ha.OutputID]uint32{}
	for _, d := range out.Deliveries().All() {
		got[d.Tuple.ID] = d.Tuple.Lineage.N // the last copy counts
	}
	for id, n := range want {
		if time.Duration(id.X) < failAt {
			lost += max(0, int64(n)-int64(got[id]))
		}
	}
	return lost, true
}

// unionFailureAt is when a fault first touches a host of the union's
// fragment (the first): a crash or pause of one, or a partition naming
// one; never when none does.
func unionFailureAt(e *experiment.Experiment) time.Duration {
	first := e.Nodes[0].Name
	at := time.Duration(math.MaxInt64)
	for _, f := range e.Faults {
		touches := baseOf(f.Crash) == first || baseOf(f.Pause) == first
		for _, g := range f.Partition {
			for _, h := range g {
				touches = touches || baseOf(h) == first
			}
		}
		if touches {
			at = min(at, f.At.D())
		}
	}
	return at
}
