package upstreambackup_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/upstreambackup"
)

// rebuiltSum is a soak failure (swarm seed 2222, run 84, shrunk; the
// stream lengthened by 1 s): B, a running sum, crashes, and A, its
// upstream, 3 ms later. B's state was backed up only in A's queue, so B.1
// restarts the sum from what A.1 can replay: the design's adjacent-failure
// limit, a gap. B.1 counts every key from one again, and its outputs reuse
// ids (key, count) the sink already holds, at later event times.
const rebuiltSum = `seed: 1718197292
duration: 3.3s
drain: 2s
source: {rate: 100, keys: 8, value: {dist: uniform, max: 1}}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{running_sum: {}}]}
spares: 2
network: {latency: 1ms, jitter: 400us, bandwidth: 1Gbps}
cpu: {per_op: 2us, per_byte: 2ns, per_event: 1us}
detector: {heartbeat: 50ms, timeout: 200ms}
strategy: {name: upstream-backup, dedup: true, ack_interval: 50ms}
faults:
  - {at: 1.276s, crash: B}
  - {at: 1.279s, crash: A}
`

// keyTime is an output matched across runs whose numbering differs: its
// key and event time.
type keyTime struct {
	key uint32
	t   int64
}

// TestAdjacentFailureRebuiltSumResumes: with dedup, the sink used to drop
// every output of the rebuilt sum whose id it had already received, so
// each key's output stalled until its new count passed the old one (for
// the rest of the run: "output did not resume"). An output is a duplicate
// only when its id and event time were both received: the rebuilt outputs
// reach the sink, and every output the failure-free run produced from a
// second after the crashes arrives.
func TestAdjacentFailureRebuiltSumResumes(t *testing.T) {
	t.Parallel()
	e, err := experiment.Parse([]byte("name: rebuilt-sum\n"+rebuiltSum), t.Name())
	require.NoError(t, err)
	ref, err := sim.ReferenceTrace(e)
	require.NoError(t, err)
	from := int64(1279*time.Millisecond + time.Second)
	var want []keyTime
	for i := range ref.Deliveries().Len() {
		if d := ref.Deliveries().At(i); !d.Tuple.IsEnd() && d.Tuple.Time >= from {
			want = append(want, keyTime{d.Tuple.Key, d.Tuple.Time})
		}
	}
	require.NotEmpty(t, want, "the failure-free run has outputs to expect after the crashes")
	missing := func(p ha.Planted) (reused, missed int) {
		out, err := sim.RunPlanted(e, upstreambackup.Name, p)
		require.NoError(t, err)
		took := map[string]bool{}
		for _, ev := range out.Trace.Events() {
			if ev.Kind == ha.EvTakeover {
				took[ev.Host] = true
			}
		}
		require.True(t, took["A.1"] && took["B.1"], "both fragments were restarted: %v", took)
		got := map[keyTime]bool{}
		firstAt := map[ha.OutputID]int64{}
		ds := out.Trace.Deliveries()
		for i := range ds.Len() {
			d := ds.At(i)
			got[keyTime{d.Tuple.Key, d.Tuple.Time}] = true
			if at, ok := firstAt[d.Tuple.ID]; !ok {
				firstAt[d.Tuple.ID] = d.Tuple.Time
			} else if at != d.Tuple.Time {
				reused++
			}
		}
		for _, w := range want {
			if !got[w] {
				missed++
			}
		}
		return reused, missed
	}
	reused, missed := missing(ha.PlantNone)
	assert.Positive(t, reused, "the trigger: the rebuilt sum's outputs reuse ids the sink holds, at other event times")
	assert.Zero(t, missed, "every output after the crashes arrives (of %d)", len(want))
	_, missedPlanted := missing(ha.PlantDedupByID)
	assert.Positive(t, missedPlanted, "with dedup by id alone the rebuilt sum's outputs are dropped")
}
