package sim

import (
	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/ops"
)

// statefulFrag reports whether fragment i of e holds operator state (an
// operator that reports its state's size, ha.Sizer: a window, a join, a
// running aggregate). Under upstream backup such a fragment's state lives
// in its upstream neighbour's output queue only: when both fail, the
// inputs that state depended on are gone (docs/strategies/upstream-backup.md,
// Limits). A stateless fragment (maps, filters) loses nothing that way —
// what it received it has passed on — so adjacent failures whose
// downstream is stateless stay inside the promise.
func statefulFrag(e *experiment.Experiment, i int) bool {
	for _, spec := range e.Nodes[i].Ops {
		for name, params := range spec {
			op, err := ops.New(name, params)
			if err != nil {
				return true // cannot tell: assume state
			}
			if _, ok := op.(ha.Sizer); ok {
				return true
			}
		}
	}
	return false
}
