package globalcheckpoint_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
)

// withFaults is the default experiment under global-checkpoint with sink
// and the fault list faults (YAML flow) instead of the crash of B.
func withFaults(t *testing.T, sink, faults string) *experiment.Experiment {
	t.Helper()
	text := strings.Replace(experiment.DefaultYAML, "faults:\n  - {at: 10.4s, crash: B}\n",
		fmt.Sprintf("strategy: {name: %s, sink: %s}\nfaults: %s\n", globalcheckpoint.Name, sink, faults), 1)
	require.NotEqual(t, experiment.DefaultYAML, text, "the default experiment's faults moved")
	e, err := experiment.Parse([]byte(text), "test")
	require.NoError(t, err)
	return e
}

// notes are the trace's notes at host that contain substr, in order.
func notes(tr *ha.Trace, host, substr string) []ha.Event {
	var out []ha.Event
	for e := range tr.All() {
		if e.Kind == ha.EvNote && e.Host == host && strings.Contains(e.Note, substr) {
			out = append(out, e)
		}
	}
	return out
}

// firstAt is the time of the first event of kind at host, or -1.
func firstAt(tr *ha.Trace, kind ha.EventKind, host string) time.Duration {
	for e := range tr.All() {
		if e.Kind == kind && e.Host == host {
			return e.T
		}
	}
	return -1
}

// TestCoordinatorFailures fails the coordinator's host (A, the first
// fragment's primary) alone, during a rollback, and together with
// another fragment, under both sinks: the store appoints a new
// coordinator, which rolls the job back; the transactional sink stays
// precise and the at-least-once sink repeats without losing anything.
func TestCoordinatorFailures(t *testing.T) {
	for _, c := range []struct {
		name, faults string
		// rollbacks the store starts; the hosts it appoints, in order
		rollbacks int
		appointed []string
	}{
		{"crash", "[{at: 10.4s, crash: A}]", 1, []string{"B"}},
		// A.1 restarted A's fragment after the crash of B.
		{"pause past detection", "[{at: 10.4s, pause: A, for: 600ms}]", 1, []string{"B"}},
		// A coordinates the rollback after B's crash and crashes once it
		// restored itself, while the store restores B.1 and C: its
		// successor rolls back again, from the same checkpoint.
		{"crash during a rollback", "[{at: 10.4s, crash: B}, {at: 10.649s, crash: A}]", 2, []string{"B.1"}},
		{"crash with another fragment", "[{at: 10.4s, crash: A}, {at: 10.401s, crash: C}]", 1, []string{"B"}},
		{"crash then the new coordinator", "[{at: 10.4s, crash: A}, {at: 10.7s, crash: B}]", 2, []string{"B", "A.1"}},
	} {
		for _, sink := range []string{globalcheckpoint.SinkTransactional, globalcheckpoint.SinkAtLeastOnce} {
			t.Run(c.name+"/"+sink, func(t *testing.T) {
				sr, tr := run(t, withFaults(t, sink, c.faults))
				r := sr.Run.Recovery
				assert.Zero(t, r.Missing+r.Wrong+int(r.LostInputs), "recovery %+v", r)
				assert.False(t, r.NotRecovered, "recovery %+v", r)
				if sink == globalcheckpoint.SinkTransactional {
					assert.Equal(t, "precise", r.Type, "recovery %+v", r)
				} else {
					assert.Contains(t, []string{"precise", "rollback/repeating"}, r.Label(), "recovery %+v", r)
				}
				var appointed []string
				for _, e := range notes(tr, "sink", "appointed at term") {
					appointed = append(appointed, e.Peer)
				}
				assert.Equal(t, c.appointed, appointed)
				for i, host := range c.appointed {
					takeover := notes(tr, host, fmt.Sprintf("coordinator takeover at term %d", i+2))
					assert.Len(t, takeover, 1, "%s takes over at term %d", host, i+2)
				}
				assert.Len(t, notes(tr, "sink", "ordered by coordinator"), c.rollbacks, "rollbacks the store started")
				if strings.Contains(c.name, "during") {
					began := notes(tr, "sink", "global rollback 1 to checkpoint")
					restarted := notes(tr, "sink", "global rollback 1: every fragment restarted")
					crashed := firstAt(tr, ha.EvCrash, "A")
					require.NotEmpty(t, began)
					require.NotEmpty(t, restarted)
					assert.True(t, began[0].T < crashed && crashed < restarted[0].T,
						"A crashes (%s) while the store restores rollback 1 (%s to %s)", crashed, began[0].T, restarted[0].T)
				}
			})
		}
	}
}

// TestPausedCoordinatorIsFenced pauses the coordinator past the detector's
// timeout: the store appoints B, and A, back, neither rolls the job back
// again nor completes a checkpoint: every checkpoint completed after the
// appointment is B's, and A learns it was replaced.
func TestPausedCoordinatorIsFenced(t *testing.T) {
	_, tr := run(t, withFaults(t, globalcheckpoint.SinkTransactional, "[{at: 10.4s, pause: A, for: 600ms}]"))
	appointed := notes(tr, "sink", "coordinator B appointed at term 2")
	require.Len(t, appointed, 1)
	resumed := firstAt(tr, ha.EvResume, "A")
	require.Greater(t, resumed, appointed[0].T, "A resumes after the store replaced it")
	assert.NotEmpty(t, notes(tr, "A", "coordinator fenced: the store appointed B at term 2"))
	assert.Empty(t, notes(tr, "sink", "ordered by coordinator A"), "A ordered no rollback")
	completed := 0
	for e := range tr.All() {
		if e.Kind == ha.EvCheckpointEnd && e.Host == "sink" && strings.HasPrefix(e.Note, "completed") && e.T > appointed[0].T {
			completed++
			assert.Contains(t, e.Note, "on B's order", "at %s", e.T)
		}
	}
	assert.Positive(t, completed, "checkpoints complete again under B")
}

// TestStoreCutOffKeepsTheCoordinator partitions the sink's host (the
// store) from every other host for longer than the detector's timeout:
// the store declares every host dead and waits instead of appointing a
// new coordinator, so the partition costs no rollback and both sinks stay
// precise (the sink's gap repair fetches what it missed).
func TestStoreCutOffKeepsTheCoordinator(t *testing.T) {
	for _, sink := range []string{globalcheckpoint.SinkTransactional, globalcheckpoint.SinkAtLeastOnce} {
		t.Run(sink, func(t *testing.T) {
			sr, tr := run(t, withFaults(t, sink, "[{at: 10.4s, partition: [[sink], [src, A, A.1, A.2, B, B.1, B.2, C, C.1, C.2]], for: 400ms}]"))
			assert.Equal(t, "precise", sr.Run.Recovery.Type, "recovery %+v", sr.Run.Recovery)
			assert.NotEmpty(t, notes(tr, "sink", "no coordinator to appoint, the store waits"))
			assert.NotEmpty(t, notes(tr, "sink", "coordinator A is back (term 1)"))
			assert.Empty(t, notes(tr, "sink", "appointed at term"))
			assert.Empty(t, notes(tr, "sink", "ordered by coordinator"))
		})
	}
}

// unionYAML is a union of two sources feeding a running sum (arbitrary),
// whose first fragment's host, the coordinator, crashes: the soak case
// that found the new coordinator rolling back twice (its own detector
// declared A dead after its takeover rollback began) and the sink taking
// the first rollback's route for the second's.
const unionYAML = `name: union-coordinator-crash
seed: 1840187891
duration: 3s
drain: 2s
source: {rate: 600, keys: 16, arrival: poisson, streams: 2}
nodes:
  - {name: A, ops: [{union: {}}, {running_sum: {}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
strategy: {name: global-checkpoint, sink: at-least-once, checkpoint_interval: 1s}
faults: [{at: 1.69s, crash: A}]
`

func TestCoordinatorCrashOnAUnionRollsBackOnce(t *testing.T) {
	sr, tr := runYAML(t, unionYAML)
	r := sr.Run.Recovery
	assert.Equal(t, "rollback", r.Type, "a union re-interleaved: %+v", r)
	assert.Zero(t, r.Missing+int(r.LostInputs), "recovery %+v", r)
	assert.Len(t, notes(tr, "sink", "ordered by coordinator"), 1, "the takeover's rollback already restarts A's fragment on A.1")
}

// lossyLastLinkYAML loses outputs on their way to the sink, then
// partitions the last fragment B off long enough for a rollback: the
// soak case that found the sink taking its position after the rollback
// from what it had counted by the time the restarted B acknowledged —
// including the resent outputs it dropped while the rollback was under
// way — so that it never asked for them again (a gap).
const lossyLastLinkYAML = `name: lossy-last-link
seed: 1244035599
duration: 5s
drain: 2s
source: {rate: 400, keys: 4}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{running_sum: {}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
strategy: {name: global-checkpoint, sink: at-least-once, checkpoint_interval: 500ms}
faults:
  - {at: 1.92s, crash: A.2}
  - {at: 2.98s, for: 530ms, loss: {to: sink, p: 0.2}}
  - {at: 3.13s, for: 350ms, partition: [[B], [A, A.1, A.2, B.1, B.2, src, sink]]}
  - {at: 4.19s, for: 830ms, delay: {from: A.2, extra: 96ms}}
`

// With a 100 ms interval B.1's acknowledgement is lost and it completes
// a checkpoint first: the store completed it, and let B.1 trim by what
// the sink had counted, before the sink took its position back.
func TestRollbackAfterLostOutputsLosesNothing(t *testing.T) {
	for _, iv := range []string{"500ms", "100ms"} {
		t.Run(iv, func(t *testing.T) {
			e, err := experiment.Parse([]byte(strings.Replace(lossyLastLinkYAML, "checkpoint_interval: 500ms", "checkpoint_interval: "+iv, 1)), "test")
			require.NoError(t, err)
			sr, tr := run(t, e)
			r := sr.Run.Recovery
			assert.Zero(t, r.Missing+r.Wrong+int(r.LostInputs), "recovery %+v", r)
			assert.Contains(t, []string{"precise", "rollback/repeating"}, r.Label(), "recovery %+v", r)
			assert.NotEmpty(t, notes(tr, "sink", "ordered by coordinator A"), "B's isolation rolls the job back")
		})
	}
}

// noCheckpointYAML crashes B before the first checkpoint completes, then
// loses some of B.1's messages: the soak case that found the sink, reset
// to "nothing received" after the rollback, taking B.1's next output as
// the start of a fresh stream instead of asking for the outputs before it.
const noCheckpointYAML = `name: no-checkpoint-yet
seed: 505997604
duration: 3s
drain: 2s
source: {rate: 700, keys: 16}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{map: {scale: 1}}]}
spares: 2
network: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}
detector: {heartbeat: 50ms, timeout: 200ms}
strategy: {name: global-checkpoint, sink: transactional, checkpoint_interval: 1s}
faults:
  - {at: 820ms, crash: B}
  - {at: 950ms, for: 220ms, loss: {from: B.1, p: 0.2}}
  - {at: 1.09s, crash: A.2}
`

func TestRollbackBeforeTheFirstCheckpointLosesNothing(t *testing.T) {
	sr, tr := runYAML(t, noCheckpointYAML)
	r := sr.Run.Recovery
	assert.Equal(t, "precise", r.Type, "recovery %+v", r)
	assert.NotEmpty(t, notes(tr, "sink", "global rollback 1 to checkpoint 0"), "no checkpoint completed before the crash")
}
