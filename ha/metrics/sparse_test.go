package metrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
)

// TestASparseKeyDoesNotHoldRecoveryForEver: key 1 has outputs only up to
// 1.5 s in the failure-free run; after the crash at 1.05 s its outputs of
// 1.1–1.5 s never arrive while key 0 is back on time from 1.2 s. No later
// output of key 1 could ever come back, and every output due after key 1's
// last one arrived: the run recovered (at the first of those arrivals, 1.6
// s), it did not stall. Were key 0 silent to the end too, it would be not
// recovered. The figure and its invariant (CheckRecovery) agree.
func TestASparseKeyDoesNotHoldRecoveryForEver(t *testing.T) {
	var ref []ha.Event
	for i := 1; i <= 30; i++ {
		ref = append(ref, deliver(time.Duration(i)*100*ms, 0, int64(i), 3*ms, 10))
		if i <= 15 {
			ref = append(ref, deliver(time.Duration(i)*100*ms, 1, int64(i), 3*ms, 10))
		}
	}
	faulty := append([]ha.Event{}, ref[:20]...) // both keys up to 1.0 s
	faulty = append(faulty, ha.Event{T: 1050 * ms, Kind: ha.EvCrash, Host: "B"},
		ha.Event{T: 1150 * ms, Kind: ha.EvDetect, Host: "B.1", Peer: "B"})
	for i := 12; i <= 30; i++ {
		faulty = append(faulty, deliver(time.Duration(i)*100*ms, 0, int64(i), 3*ms, 10))
	}
	faulty = append(faulty, stats(3100*ms))
	reference, run := ha.NewTrace(ref...), ha.NewTrace(faulty...)
	r := metrics.RecoveryOf(reference, run)
	assert.False(t, r.NotRecovered)
	require.NotNil(t, r.RecoveryMs)
	assert.InDelta(t, 1600-1050, *r.RecoveryMs, 1e-9, "back when the first output due after key 1's last arrived")
	assert.NoError(t, metrics.CheckRecovery(r, reference, run, metrics.RecoveryOptions{}))

	silent := append([]ha.Event{}, faulty[:22]...) // nothing after the crash
	silent = append(silent, stats(3100*ms))
	r = metrics.RecoveryOf(reference, ha.NewTrace(silent...))
	assert.True(t, r.NotRecovered)
}
