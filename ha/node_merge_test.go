package ha_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/sim"
)

// orderOp records the event times of the tuples it processes.
type orderOp struct{ times *[]int64 }

func (o orderOp) Name() string                  { return "order" }
func (o orderOp) Class() ha.Class               { return ha.Arbitrary }
func (o orderOp) Process(t ha.Tuple, _ ha.Emit) { *o.times = append(*o.times, t.Time) }
func (o orderOp) Snapshot() ([]byte, error)     { return nil, nil }
func (o orderOp) Restore([]byte) error          { return nil }

// newMergeNode builds host U.1 of a two-input fragment U fed by src and
// src2, and makes it take over: it catches up on both ports.
func newMergeNode(t *testing.T) (*ha.Node, *[]int64) {
	t.Helper()
	var times []int64
	topo := &ha.Topology{Sources: []string{"src", "src2"}, Sink: "sink",
		Frags: []ha.Fragment{{Name: "U", Hosts: []string{"U", "U.1"}, Inputs: 2,
			NewOps: func() ([]ha.Operator, error) { return []ha.Operator{orderOp{&times}}, nil }}}}
	n, err := ha.NewNode(ha.NodeConfig{Host: "U.1", Topology: topo, Env: &fakeEnv{}, Strategy: retainAll{}})
	require.NoError(t, err)
	n.Start()
	n.TakeOver(ha.TakeoverOptions{})
	return n, &times
}

// data delivers tuples of port (seqs from first, one event-time
// millisecond each starting at ms) from the port's source.
func data(n *ha.Node, port uint8, first uint64, ms ...int64) {
	from := []string{"src", "src2"}[port]
	m := &ha.Message{Kind: ha.KindData, From: from, Frag: ha.FragSource, Stream: port}
	for i, x := range ms {
		m.Tuples = append(m.Tuples, ha.Tuple{Seq: first + uint64(i), Time: x * int64(time.Millisecond),
			ID: ha.OutputID{Kind: ha.IDSource, Key: uint32(port), X: int64(first) + int64(i)}})
	}
	n.Deliver(m)
}

func replayEnd(n *ha.Node, port uint8, upTo uint64) {
	from := []string{"src", "src2"}[port]
	n.Deliver(&ha.Message{Kind: ha.KindData, From: from, Frag: ha.FragSource, Stream: port, Type: ha.ReplayEndType, Seq: upTo})
}

func ms(xs ...int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = x * int64(time.Millisecond)
	}
	return out
}

// TestCatchUpMergesTwoReplaysByEventTime: a two-input fragment that takes
// over delivers its two replays in event-time order, holding a port that
// runs ahead while the other may still bring older tuples; the position a
// checkpoint would take (InputSeq) covers only what was delivered.
func TestCatchUpMergesTwoReplaysByEventTime(t *testing.T) {
	n, times := newMergeNode(t)
	data(n, 0, 1, 1, 2, 3, 4, 5, 6) // a whole chunk of src's replay first
	assert.Empty(t, *times, "src2 may still bring older tuples")
	assert.Zero(t, n.InputSeq(0), "nothing delivered yet")
	data(n, 1, 1, 1, 2, 3)
	assert.Equal(t, ms(1, 1, 2, 2, 3, 3), *times, "merged by event time, port 0 first on a tie")
	assert.Equal(t, uint64(3), n.InputSeq(0), "src's tuples from 4 ms wait: src2 may bring older ones")
	assert.Equal(t, uint64(3), n.InputSeq(1))
	replayEnd(n, 1, 3) // src2 has caught up: what it sends now is live
	assert.Equal(t, ms(1, 1, 2, 2, 3, 3, 4, 5, 6), *times, "a caught-up port holds nothing back")
	data(n, 1, 4, 7)
	replayEnd(n, 0, 6)
	data(n, 0, 7, 8)
	data(n, 1, 5, 2) // arrival order again once both caught up
	assert.Equal(t, ms(1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 2), *times)
}

// TestCatchUpMergeNeverWaitsForAnEndedStream: a port whose source ended
// brings nothing older, so the other port's tuples are not held for it.
func TestCatchUpMergeNeverWaitsForAnEndedStream(t *testing.T) {
	n, times := newMergeNode(t)
	data(n, 1, 1, 1, 2)
	n.Deliver(&ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource, Stream: 0,
		Tuples: []ha.Tuple{{Seq: 1, Time: 0, ID: ha.OutputID{Kind: ha.IDEnd}}}})
	assert.Len(t, *times, 3, "src's end and src2's tuples go through")
	data(n, 1, 3, 3)
	assert.Len(t, *times, 4)
}

// TestTwoInputReplaysLoseNothing: a union feeding an event-time window
// (and a join) over two sources, whose fragment fails: the new primary
// gets two replays that arrive in chunks of hundreds of milliseconds each.
// Merged by event time, no window drops the slower input's tuples as late,
// so the strategies that replay lose no input and, the window counts being
// independent of the order within a window, recover precisely.
func TestTwoInputReplaysLoseNothing(t *testing.T) {
	t.Parallel()
	queries := map[string]string{
		"union then window": `  - {name: A, ops: [{union: {}}, {tumbling: {size: 500ms, agg: count}}]}
  - {name: B, ops: [{running_sum: {}}]}`,
		"join then window": `  - {name: A, ops: [{join: {window: 500ms}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: count}}]}`,
	}
	for name, nodes := range queries {
		for _, seed := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed %d", name, seed), func(t *testing.T) {
				t.Parallel()
				y := fmt.Sprintf(`name: merge
seed: %d
duration: 6s
drain: 2s
source: {rate: 400, keys: 4, streams: 2}
nodes:
%s
spares: 2
network: {latency: 1ms, jitter: 300us, bandwidth: 100Mbps}
detector: {heartbeat: 50ms, timeout: 300ms}
faults: [{at: 3s, crash: A}]
`, seed, nodes)
				e, err := experiment.Parse([]byte(y), t.Name())
				require.NoError(t, err)
				c, err := sim.Compare(e, []string{"passive-standby", "upstream-backup"})
				require.NoError(t, err)
				for _, r := range c.Runs {
					rec := r.Run.Recovery
					assert.Zero(t, rec.LostInputs, "%s: %v", r.Run.Strategy, rec.Explanations)
					assert.Zero(t, rec.Missing, "%s: %v", r.Run.Strategy, rec.Explanations)
					requireEvent(t, r.Trace, ha.EvCaughtUp, "A.1")
				}
			})
		}
	}
}
