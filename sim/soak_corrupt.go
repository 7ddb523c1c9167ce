package sim

import (
	"slices"
	"strings"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// corruptNote starts the note of the trace event the simulator records for
// each message a corrupt fault corrupted.
const corruptNote = "fault: corrupted"

// admitUncorrupted judges again a run that lay outside the fault model
// only for its corrupt faults, once the run showed that they corrupted no
// message (none of the links they covered carried a message with a body
// while they lasted, or every draw spared it). Corruption draws from a
// random stream of its own, so such a run is exactly the run without
// those faults: the rest of the model decides whether the precise
// invariant applies.
func (res *SoakResult) admitUncorrupted(trace *ha.Trace) {
	if res.OutOfModelRule != RuleCorrupt {
		return
	}
	for _, ev := range trace.Events() {
		if ev.Kind == ha.EvNote && strings.HasPrefix(ev.Note, corruptNote) {
			return
		}
	}
	c := *res.Case
	e := *c.Experiment
	e.Faults = slices.DeleteFunc(slices.Clone(e.Faults), func(f experiment.FaultConfig) bool { return f.Corrupt != nil })
	c.Experiment = &e
	res.OutOfModelRule, res.OutOfModel = c.OutOfModel()
	res.InModel = res.OutOfModelRule == ""
	precise, _ := c.PreciseExpected()
	res.PreciseChecked = precise && res.InModel
}
