package ha_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// fakeEnv records what a node sends; time is set by the test.
type fakeEnv struct {
	now    time.Duration
	sent   []sent
	timers []string
	trace  []ha.Event
}

type sent struct {
	to string
	m  ha.Message
}

func (e *fakeEnv) Now() time.Duration                 { return e.now }
func (e *fakeEnv) Send(to string, m *ha.Message)      { e.sent = append(e.sent, sent{to, copyOf(m)}) }
func (e *fakeEnv) SetTimer(_ time.Duration, n string) { e.timers = append(e.timers, n) }
func (e *fakeEnv) Work(int, int)                      {}
func (e *fakeEnv) Rand() *rand.Rand                   { return rand.New(rand.NewPCG(1, 2)) }

// copyOf copies m and its Tuples: Send lends them for the call only.
func copyOf(m *ha.Message) ha.Message {
	c := *m
	c.Tuples = slices.Clone(m.Tuples)
	return c
}

// Trace keeps a copy of a lent delivery's tuple, as the Env contract asks.
func (e *fakeEnv) Trace(ev ha.Event) {
	if ev.Tuple != nil {
		t := *ev.Tuple
		ev.Tuple = &t
	}
	e.trace = append(e.trace, ev)
}

// dataTo returns the seqs of data tuples sent to host, in order.
func (e *fakeEnv) dataTo(host string) []uint64 {
	var seqs []uint64
	for _, s := range e.sent {
		if s.to == host && s.m.Kind == ha.KindData {
			for _, t := range s.m.Tuples {
				seqs = append(seqs, t.Seq)
			}
		}
	}
	return seqs
}

// retainAll is a test strategy whose nodes keep every output.
type retainAll struct{}

func (retainAll) Name() string                             { return "retain-all" }
func (retainAll) Replicas() int                            { return 1 }
func (retainAll) InitialReceivers(hosts []string) []string { return hosts[:1] }
func (retainAll) Hooks(n *ha.Node) ha.Hooks                { return retainHooks{n: n} }

type retainHooks struct {
	ha.NopHooks
	n *ha.Node
}

func (h retainHooks) Start() { h.n.SetRetain(true) }

func testTopology() *ha.Topology {
	return &ha.Topology{
		Sources: []string{"src"}, Sink: "sink",
		Frags: []ha.Fragment{{Name: "A", Hosts: []string{"A", "A.1"}, Inputs: 1,
			NewOps: func() ([]ha.Operator, error) { return nil, nil }}},
	}
}

// newSource builds a retaining source host emitting rate tuples/s for 1 s.
func newSource(t *testing.T, env *fakeEnv, rate float64) *ha.Node {
	t.Helper()
	src, err := ha.NewNode(ha.NodeConfig{
		Host: "src", Topology: testTopology(), Env: env, Strategy: retainAll{},
		Source: ha.SourceSpec{Rate: rate, Keys: 2, Value: "uniform", Max: 1, Duration: time.Second, Batch: time.Millisecond},
	})
	require.NoError(t, err)
	return src
}

func TestLiveOutputNeverOvertakesAReplay(t *testing.T) {
	env := &fakeEnv{}
	src := newSource(t, env, 1000)
	src.Start()
	for i := 1; i <= 10; i++ {
		env.now = time.Duration(i) * time.Millisecond
		src.Fire("ha.gen")
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, env.dataTo("A"))

	// A.1 takes over having seen up to seq 4: its route arrives, then the
	// source emits more before the resume request arrives.
	src.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A.1", Frag: 0, Epoch: 1,
		Route: &ha.Route{Frag: 0, Epoch: 1, Primary: "A.1", Receivers: []string{"A.1"}, Resume: true}})
	for i := 11; i <= 13; i++ {
		env.now = time.Duration(i) * time.Millisecond
		src.Fire("ha.gen")
	}
	assert.Empty(t, env.dataTo("A.1"), "live output waits for the resume request")
	src.Deliver(&ha.Message{Kind: ha.KindResume, From: "A.1", Frag: 0, Epoch: 1, Seq: 4})
	assert.Equal(t, []uint64{5, 6, 7, 8, 9, 10, 11, 12, 13}, env.dataTo("A.1"),
		"the replay comes first and covers what was held: nothing is sent twice")
	env.now = 14 * time.Millisecond
	src.Fire("ha.gen")
	got := env.dataTo("A.1")
	assert.Equal(t, uint64(14), got[len(got)-1], "afterwards output flows directly")
}

func TestStaleDataIsFenced(t *testing.T) {
	env := &fakeEnv{}
	a1, err := ha.NewNode(ha.NodeConfig{Host: "sink", Topology: testTopology(), Env: env, Strategy: retainAll{}})
	require.NoError(t, err)
	a1.Start()
	a1.Deliver(&ha.Message{Kind: ha.KindRoute, From: "A.1", Frag: 0, Epoch: 1,
		Route: &ha.Route{Frag: 0, Epoch: 1, Primary: "A.1", Receivers: []string{"A.1"}}})
	tup := ha.Tuple{Seq: 1, ID: ha.OutputID{Kind: ha.IDSource, X: 1}}
	a1.Deliver(&ha.Message{Kind: ha.KindData, From: "A", Frag: 0, Epoch: 0, Tuples: []ha.Tuple{tup}})
	a1.Deliver(&ha.Message{Kind: ha.KindData, From: "A.1", Frag: 0, Epoch: 1, Tuples: []ha.Tuple{tup}})
	a1.Deliver(&ha.Message{Kind: ha.KindData, From: "A.1", Frag: 0, Epoch: 1, Tuples: []ha.Tuple{tup}})
	var delivered, fenced int
	for _, e := range env.trace {
		switch e.Kind {
		case ha.EvDeliver:
			delivered++
		case ha.EvFenced:
			fenced++
			assert.Equal(t, "A", e.Peer)
		}
	}
	assert.Equal(t, 1, delivered, "the stale primary's copy is fenced, the repeat is dropped by seq")
	assert.Equal(t, 1, fenced)
	st := a1.Stats()
	assert.EqualValues(t, 1, st.Fenced)
	assert.EqualValues(t, 1, st.Duplicates)
}

func TestSourceCatchesUpInBoundedBursts(t *testing.T) {
	env := &fakeEnv{}
	src := newSource(t, env, 1e6)
	src.Start()
	env.timers = nil
	env.now = 5 * time.Millisecond // the timer fired late: 5000 tuples are due
	src.Fire("ha.gen")
	require.Len(t, env.sent, 1)
	assert.Len(t, env.sent[0].m.Tuples, ha.MaxSourceBurst, "one wake-up emits a bounded burst")
	assert.Contains(t, env.timers, "ha.gen", "and continues right away")
	for i := 0; i < 5; i++ {
		src.Fire("ha.gen")
	}
	assert.Len(t, env.dataTo("A"), 5000, "nothing due is skipped")
}

// bothReceive is a test strategy whose replicas all receive input.
type bothReceive struct{ retainAll }

func (bothReceive) InitialReceivers(hosts []string) []string { return hosts }

// TestEveryReceiverGetsTheLentBatch: a node sends one batch to every
// receiver from the same message and batch, which Send only lends (the
// fakeEnv copies them, as an Env that keeps them must), and reuses both
// for its next output: each receiver still holds exactly what was sent.
func TestEveryReceiverGetsTheLentBatch(t *testing.T) {
	env := &fakeEnv{}
	src, err := ha.NewNode(ha.NodeConfig{
		Host: "src", Topology: testTopology(), Env: env, Strategy: bothReceive{},
		Source: ha.SourceSpec{Rate: 2000, Keys: 2, Value: "uniform", Max: 1, Duration: time.Second, Batch: time.Millisecond},
	})
	require.NoError(t, err)
	src.Start()
	for ms := 1; ms <= 3; ms++ {
		env.now = time.Duration(ms) * time.Millisecond
		src.Fire("ha.gen")
	}
	want := []uint64{1, 2, 3, 4, 5, 6}
	assert.Equal(t, want, env.dataTo("A"))
	assert.Equal(t, want, env.dataTo("A.1"))
	require.Len(t, env.sent, 6, "one message per receiver and wake-up")
}
