package metrics

import (
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
)

// FaultyRun is one strategy's classified run with the faults: what a
// driver hands the reports for its trace files, figures and anomaly lists.
type FaultyRun struct {
	Strategy  string
	Reference *ha.Trace // the failure-free no-HA run (O_e)
	// Own is the strategy's own failure-free run, keeping of each delivery
	// only its time and id: what Recovery was measured against.
	Own      *ha.Trace
	Trace    *ha.Trace
	Recovery Recovery
	// Classes is the classification Recovery was computed from: every
	// delivery's label and the id index.
	Classes classify.Result
}
