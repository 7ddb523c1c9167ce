package metrics

import (
	"time"

	"github.com/streamha/streamha/ha"
)

// Restart is the time from the first crash in a trace to the last
// caught_up event after it: when every host that restarted a fragment had
// processed what was replayed to it. ok is false without a crash or
// without a caught_up after it. Unlike the recovery time it ignores the
// sink's latency: it is the protocol's own restart, which a global
// rollback pays for every fragment and a local recovery for one.
func Restart(tr *ha.Trace) (d time.Duration, crash, caughtUp time.Duration, ok bool) {
	crash, caughtUp = -1, -1
	for e := range tr.All() {
		switch {
		case e.Kind == ha.EvCrash && crash < 0:
			crash = e.T
		case e.Kind == ha.EvCaughtUp && crash >= 0:
			caughtUp = e.T
		}
	}
	if crash < 0 || caughtUp < 0 {
		return 0, crash, caughtUp, false
	}
	return caughtUp - crash, crash, caughtUp, true
}
