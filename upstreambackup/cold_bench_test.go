package upstreambackup

import (
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// stubEnv is an Env for timing one node's handlers alone. Like the
// cluster's, Send copies the lent message and its Tuples into slabs and
// hands the copy over under a lock, as the cluster transport queues it for
// its writer (the lock's atomic instruction waits for the handler's
// pending stores); what is sent and traced is then discarded.
type stubEnv struct {
	now    time.Duration
	rng    *rand.Rand
	mu     sync.Mutex
	q      []*ha.Message
	msgs   []ha.Message // slab of copied messages
	tuples []ha.Tuple   // slab of copied tuples
}

// copyOf copies m and its Tuples as the cluster's Send does: into slabs
// of 64 messages and 512 tuples.
func (e *stubEnv) copyOf(m *ha.Message) *ha.Message {
	if len(e.msgs) == cap(e.msgs) {
		e.msgs = make([]ha.Message, 0, 64)
	}
	e.msgs = append(e.msgs, *m)
	c := &e.msgs[len(e.msgs)-1]
	if k := len(m.Tuples); k > 0 {
		if cap(e.tuples)-len(e.tuples) < k {
			e.tuples = make([]ha.Tuple, 0, max(512, k))
		}
		i := len(e.tuples)
		e.tuples = append(e.tuples, m.Tuples...)
		c.Tuples = e.tuples[i : i+k : i+k]
	}
	return c
}

func (e *stubEnv) Now() time.Duration { return e.now }
func (e *stubEnv) Send(_ string, m *ha.Message) {
	m = e.copyOf(m)
	e.mu.Lock()
	if len(e.q) == cap(e.q) {
		clear(e.q)
		e.q = e.q[:0]
	}
	e.q = append(e.q, m)
	e.mu.Unlock()
}
func (e *stubEnv) SetTimer(time.Duration, string)      {}
func (e *stubEnv) Work(int, int)                       {}
func (e *stubEnv) Rand() *rand.Rand                    { return e.rng }
func (e *stubEnv) Trace(ha.Event)                      {}
func (e *stubEnv) advance(d time.Duration) (now int64) { e.now += d; return int64(e.now) }

// evictSize is more than the last-level cache of the machines we measure
// on: sweeping it leaves nothing of the node in cache.
const evictSize = 16 << 20

// BenchmarkColdMessage times a host of the default query handling one
// two-tuple data message with the caches emptied before every message,
// with no HA and with upstream backup's hooks: what a cluster node loop
// pays, woken once per message after other processes ran. A warm loop
// (go test -bench on Deliver alone) hides the difference. A is a filter
// then a map, B a one-second tumbling window. Every 100 messages (an ack
// round) the downstream acknowledges level 0 up to everything and level 1
// up to what it had acknowledged at level 0 a round earlier, and the host
// runs its own ack round; those two are timed cold too. Reports ns per
// message for each side and their difference, and upstream backup's ns
// per ack received and per ack round.
//
//	go test -run '^$' -bench ColdMessage -benchtime 20000x ./upstreambackup
//
// With STREAMHA_COLD_SIDE=none or ub only that side runs, every time: run
// each under valgrind --tool=cachegrind to count the cache lines a message
// misses instead of timing it (docs/benchmarks.md, "Cache lines, counted").
func BenchmarkColdMessage(b *testing.B) {
	for _, c := range []struct{ host, from, down string }{{"A", "src", "B"}, {"B", "A", "C"}} {
		b.Run(c.host, func(b *testing.B) { benchColdMessage(b, c.host, c.from, c.down) })
	}
}

func benchColdMessage(b *testing.B, host, from, down string) {
	type side struct {
		n             *ha.Node
		env           *stubEnv
		seq           uint64
		acked         uint64 // output to acknowledge at level 1 next round
		ns            time.Duration
		ackNs, tickNs time.Duration
		rounds        int
	}
	e := experiment.Default()
	mk := func(st ha.Strategy) *side {
		env := &stubEnv{rng: rand.New(rand.NewPCG(1, 2))}
		n, err := ha.NewNode(ha.NodeConfig{Host: host, Topology: e.Topology(st), Env: env, Strategy: st})
		if err != nil {
			b.Fatal(err)
		}
		n.Start()
		return &side{n: n, env: env}
	}
	ub, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	sides := []*side{mk(strategies.None{}), mk(ub)}
	one := -1 // both sides, alternating
	switch v := os.Getenv("STREAMHA_COLD_SIDE"); v {
	case "":
	case "none":
		one = 0
	case "ub":
		one = 1
	default:
		b.Fatalf("STREAMHA_COLD_SIDE=%q: want none or ub", v)
	}
	upFrag, _ := sides[0].n.Topology().FragOf(from)
	sweep := make([]byte, evictSize)
	m := &ha.Message{Kind: ha.KindData, From: from, Frag: upFrag, Tuples: make([]ha.Tuple, 2)}
	for i := 0; b.Loop(); i++ {
		s := sides[i%2]
		if one >= 0 {
			s = sides[one]
		}
		for j := range m.Tuples {
			s.seq++
			t := s.env.advance(500 * time.Microsecond)
			m.Tuples[j] = ha.Tuple{Seq: s.seq, Key: uint32(s.seq % 64), Time: t, Emit: t, Value: float64(s.seq % 100),
				ID: ha.OutputID{Kind: ha.IDSource, X: int64(s.seq)}}
		}
		if s.seq%200 == 0 {
			out := s.n.OutputSeq()
			ack := &ha.Message{Kind: ha.KindAck, From: down, Frag: s.n.DownstreamFrag(),
				Seq: s.acked, Level: 1, Body: encodeAck(s.n.Epoch(), out)}
			s.acked = out
			evict(sweep)
			t0 := time.Now()
			s.n.Deliver(ack)
			s.ackNs += time.Since(t0)
			evict(sweep)
			t0 = time.Now()
			s.n.Handle(ha.Input{Kind: ha.InputTimer, Name: tickTimer})
			s.tickNs += time.Since(t0)
			s.rounds++
		}
		evict(sweep)
		t0 := time.Now()
		s.n.Deliver(m)
		s.ns += time.Since(t0)
	}
	u := sides[1]
	if b.N > 4000 && u.n.OutputLen() > 4000 {
		b.Fatalf("%s retains %d tuples: the acks do not trim its queue", host, u.n.OutputLen())
	}
	per := func(d time.Duration, k int) float64 { return float64(d.Nanoseconds()) / float64(max(1, k)) }
	none, ubMsg := per(sides[0].ns, int(sides[0].seq/2)), per(u.ns, int(u.seq/2))
	b.ReportMetric(none, "none-ns/msg")
	b.ReportMetric(ubMsg, "ub-ns/msg")
	b.ReportMetric(ubMsg-none, "diff-ns/msg")
	b.ReportMetric(per(u.ackNs, u.rounds), "ub-ns/ack")
	b.ReportMetric(per(u.tickNs, u.rounds), "ub-ns/round")
}

// evict writes one byte per cache line of sweep.
func evict(sweep []byte) {
	for k := 0; k < len(sweep); k += 64 {
		sweep[k]++
	}
}
