package upstreambackup

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// TestAckRoundAllocations: in steady state a busy stateless host's ack
// round allocates the ack it sends (the message and its body) and nothing
// else; in cluster mode every allocation in a round woken from cold caches
// costs a dozen cache misses of the allocator's own state.
func TestAckRoundAllocations(t *testing.T) {
	e := experiment.Default()
	st, err := New(DefaultConfig())
	require.NoError(t, err)
	env := &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}
	n, err := ha.NewNode(ha.NodeConfig{Host: "A", Topology: e.Topology(st), Env: env, Strategy: st})
	require.NoError(t, err)
	n.Start()
	bFrag := n.DownstreamFrag()
	var seq uint64
	m := &ha.Message{Kind: ha.KindData, From: "src", Frag: ha.FragSource, Tuples: make([]ha.Tuple, 2)}
	ack := &ha.Message{Kind: ha.KindAck, From: "B", Frag: bFrag, Level: 1, Body: make([]byte, 0, 2*binary.MaxVarintLen64)}
	round := func() {
		for range 32 { // 64 ms of input at 1000 two-tuple messages a second
			for j := range m.Tuples {
				seq++
				tm := env.advance(time.Millisecond / 2)
				m.Tuples[j] = ha.Tuple{Seq: seq, Time: tm, Emit: tm, Value: 0.5, ID: ha.OutputID{Kind: ha.IDSource, X: int64(seq)}}
			}
			n.Deliver(m)
		}
		// B acknowledges at level 1 what it had at level 0 a round ago.
		out := n.OutputSeq()
		ack.Body = binary.AppendUvarint(binary.AppendUvarint(ack.Body[:0], n.Epoch()), out)
		n.Deliver(ack)
		ack.Seq = out
		n.Handle(ha.Input{Kind: ha.InputTimer, Name: tickTimer})
	}
	for range 20 {
		round()
	}
	const rounds = 500
	acks := st.stats.host("A").acks
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range rounds {
		round()
	}
	runtime.ReadMemStats(&ms1)
	require.Equal(t, int64(rounds), st.stats.host("A").acks-acks, "one ack a round")
	require.Less(t, n.OutputLen(), 200, "the acks trim the queue")
	// The ack message and its body, plus a share of the Env's message and
	// tuple slabs (64 messages, 512 tuples): the cluster's Send copies what
	// it is lent.
	per := float64(ms1.Mallocs-ms0.Mallocs) / rounds
	assert.Less(t, per, 3.0, "allocations per ack round and its 32 data messages")
}
