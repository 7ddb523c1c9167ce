package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/timeq"
)

// Network is the network model.
type Network struct {
	// Latency is the one-way propagation delay.
	Latency time.Duration
	// Jitter is the maximum extra random delay (uniform in [0, Jitter)).
	// Links stay FIFO like TCP.
	Jitter time.Duration
	// Bandwidth is in bits per second; 0 means unlimited.
	Bandwidth float64
	// Loss is the probability that a message is lost.
	Loss float64
}

// CPU is the per-host CPU model.
type CPU struct {
	// PerOp is the cost of one operator invocation on one tuple.
	PerOp time.Duration
	// PerByte is the cost of serialising or deserialising one byte of state.
	PerByte time.Duration
	// PerEvent is the fixed cost of handling one event (message, timer).
	PerEvent time.Duration
}

// Detector is the failure-detector model.
type Detector struct {
	// Heartbeat is the probe or heartbeat interval.
	Heartbeat time.Duration
	// Timeout is how long after the last heartbeat a host is declared dead.
	Timeout time.Duration
}

// Config is one simulated run.
type Config struct {
	Seed      uint64
	Topology  *ha.Topology
	Strategy  ha.Strategy
	Source    ha.SourceSpec
	Network   Network
	CPU       CPU
	Detector  Detector
	Faults    []experiment.Fault
	NoFencing bool
	// NoRepair turns the runtime's repair machinery off (ha.NodeConfig.NoRepair):
	// for measuring its cost only.
	NoRepair bool
	// Planted re-introduces known protocol bugs (ha.Planted), for the soak's
	// self-test only.
	Planted ha.Planted
	// TraceEmits traces every tuple every host emits.
	TraceEmits bool
	// LatenciesOnly keeps of each sink delivery only its latency
	// (ha.NewLatencyTrace): the failure-free run a strategy's overhead is
	// measured from reads nothing else of its output.
	LatenciesOnly bool
	// TimingOnly keeps of each sink delivery only its time, id and
	// emission time (ha.NewTimingTrace): enough for the failure-free run a
	// strategy's overhead and recovery time are measured from.
	TimingOnly bool
	// End is when the simulation stops.
	End time.Duration
	// MaxEvents stops the run after this many events (0 = no limit), so a
	// livelocked protocol cannot keep the simulator busy forever; the
	// outcome says it was truncated.
	MaxEvents int64
}

// Outcome is what a run produced.
type Outcome struct {
	// Trace is every event in time order.
	Trace *ha.Trace
	// Events is the number of events the simulator processed.
	Events int64
	// Truncated reports that the run hit Config.MaxEvents before its end.
	Truncated bool
}

type hostState uint8

const (
	up hostState = iota
	crashed
	paused
)

type host struct {
	name      string
	node      *ha.Node
	state     hostState
	inbox     []queued
	head      int
	busyUntil time.Duration
	readySet  bool
	rng       *rand.Rand
	cpu       time.Duration
	// handler state
	start   time.Duration
	charged time.Duration
	// incident counter, so a detection scheduled for an old failure is ignored
	incident int
	declared map[string]bool // observers that declared this host dead
	idx      int             // position in Sim.order
	links    []*link         // outgoing links by destination index, made on first use
}

// queued is one input in a host's inbox; own marks a message copied by
// env.Send, which goes back to the recycler once handled.
type queued struct {
	it  ha.Input
	own bool
}

type link struct {
	rng     *rand.PCG  // jitter and loss draws (see unitFloat)
	crng    *rand.Rand // corruption draws, apart so they never shift rng's
	txFree  time.Duration
	lastArr time.Duration
}

type evKind uint8

const (
	evArrive evKind = iota
	evTimer
	evReady
	evFault
	evFaultEnd
	evDetect
	evAlive
)

type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	host *host
	it   ha.Input
	own  bool // it.Msg belongs to the recycler
	f    int  // fault index
	peer *host
	inc  int
	part bool // a detection caused by a partition: the peer is up but unreachable
}

// eventQueue holds the pending events in (at, seq) order: every key is
// unique (seq grows with each push), so the run is the same with any
// correct priority queue.
type eventQueue = timeq.Queue[*event]

// Sim is one simulation in progress.
type Sim struct {
	cfg     Config
	now     time.Duration
	q       eventQueue
	seq     uint64
	hosts   map[string]*host
	order   []*host
	trace   ha.Trace
	events  int64
	active  []int // indices of faults in force (partition, delay, loss)
	current *host
	free    []*event // recycled events: the queue allocates nothing in steady state
	pool    recycler // recycled messages (see env.Send)
	// next is a host whose evReady event is due now and would be the
	// queue's next pop: it is run without a trip through the queue.
	next *host
	// truncated: the run stopped at Config.MaxEvents
	truncated bool
}

// newEvent returns a zeroed event from the free list.
func (s *Sim) newEvent() *event {
	if n := len(s.free); n > 0 {
		e := s.free[n-1]
		s.free = s.free[:n-1]
		return e
	}
	return new(event)
}

// unitFloat is rand.New(p).Float64() without the interface call: the same
// draw, in [0, 1).
func unitFloat(p *rand.PCG) float64 {
	return float64(p.Uint64()<<11>>11) / (1 << 53)
}

// Run simulates cfg to its end.
func Run(cfg Config) (*Outcome, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	s.Loop()
	return s.Outcome(), nil
}

// New prepares a simulation, or returns an error naming the field of cfg
// it cannot run with (Config.Validate).
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, hosts: map[string]*host{}}
	switch {
	case cfg.LatenciesOnly:
		s.trace = *ha.NewLatencyTrace()
	case cfg.TimingOnly:
		s.trace = *ha.NewTimingTrace()
	}
	for _, name := range cfg.Topology.Hosts() {
		h := &host{name: name, rng: experiment.Seeded(cfg.Seed, "node", name), declared: map[string]bool{}, idx: len(s.order)}
		s.hosts[name] = h
		s.order = append(s.order, h)
	}
	for _, h := range s.order {
		n, err := ha.NewNode(ha.NodeConfig{
			Host: h.name, Topology: cfg.Topology, Env: &env{s: s, h: h},
			Strategy: cfg.Strategy, Source: cfg.Source, NoFencing: cfg.NoFencing, NoRepair: cfg.NoRepair, Planted: cfg.Planted, TraceEmits: cfg.TraceEmits,
		})
		if err != nil {
			return nil, err
		}
		h.node = n
	}
	for i, f := range cfg.Faults {
		if f.Host != "" {
			if _, ok := s.hosts[f.Host]; !ok {
				return nil, fmt.Errorf("faults[%d]: unknown node %q", i, f.Host)
			}
		}
		s.push(&event{at: f.At, kind: evFault, f: i})
	}
	for _, h := range s.order {
		s.current = h
		h.start, h.charged = 0, 0
		h.node.Start()
		s.finishHandler(h)
	}
	s.current = nil
	return s, nil
}

func (s *Sim) push(e *event) {
	s.seq++
	e.seq = s.seq
	s.q.Push(timeq.Entry[*event]{At: e.at, Seq: s.seq, V: e})
}

// Loop runs events until the end time.
func (s *Sim) Loop() {
	for s.next != nil || len(s.q) > 0 {
		if s.next == nil && s.q[0].At > s.cfg.End {
			break
		}
		if s.cfg.MaxEvents > 0 && s.events >= s.cfg.MaxEvents {
			s.truncated = true
			break
		}
		s.events++
		if h := s.next; h != nil {
			s.next = nil
			s.ready(h)
			continue
		}
		e := s.q.Pop().V
		s.now = e.at
		s.handle(e)
		*e = event{}
		s.free = append(s.free, e)
	}
	if s.now < s.cfg.End {
		s.now = s.cfg.End
	}
	for _, h := range s.order {
		st := h.node.Stats()
		st.CPU = int64(h.cpu)
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvStats, Host: h.name, Stats: &st})
	}
}

// Outcome returns the run's trace.
func (s *Sim) Outcome() *Outcome {
	return &Outcome{Trace: &s.trace, Events: s.events, Truncated: s.truncated}
}

func (s *Sim) handle(e *event) {
	switch e.kind {
	case evArrive, evTimer:
		s.enqueue(e.host, queued{it: e.it, own: e.own})
	case evReady:
		s.ready(e.host)
	case evFault:
		s.startFault(e.f)
	case evFaultEnd:
		s.endFault(e.f)
	case evDetect:
		if e.peer.incident == e.inc && (e.part || e.peer.state != up) && e.host.state != crashed {
			e.peer.declared[e.host.name] = true
			s.enqueue(e.host, queued{it: ha.Input{Kind: ha.InputPeerDown, Name: e.peer.name}})
		}
	case evAlive:
		if e.host.state != crashed {
			s.enqueue(e.host, queued{it: ha.Input{Kind: ha.InputPeerUp, Name: e.peer.name}})
		}
	}
}

func (s *Sim) enqueue(h *host, q queued) {
	if h.state == crashed {
		s.drop(q)
		return
	}
	h.inbox = append(h.inbox, q)
	s.kick(h)
}

// drop returns a queued input that will never be handled to the recycler.
func (s *Sim) drop(q queued) {
	if q.own {
		s.pool.release(q.it.Msg)
	}
}

// kick schedules processing of h's inbox when it is idle and runnable.
// An evReady event due now, with nothing else queued for now, would be
// popped next: it goes to s.next instead, which Loop runs first (ahead of
// anything queued later, which would have a higher seq).
func (s *Sim) kick(h *host) {
	if h.state != up || h.readySet || h.head >= len(h.inbox) {
		return
	}
	h.readySet = true
	at := max(s.now, h.busyUntil)
	if at == s.now && s.next == nil && (len(s.q) == 0 || s.q[0].At > at) {
		s.next = h
		return
	}
	e := s.newEvent()
	e.at, e.kind, e.host = at, evReady, h
	s.push(e)
}

// ready handles an evReady event: h processes its next input.
func (s *Sim) ready(h *host) {
	h.readySet = false
	s.process(h)
}

func (s *Sim) process(h *host) {
	if h.state != up || h.head >= len(h.inbox) {
		return
	}
	q := h.inbox[h.head]
	h.inbox[h.head] = queued{}
	h.head++
	switch {
	case h.head == len(h.inbox):
		// drained: reuse the backing array from its start
		h.inbox, h.head = h.inbox[:0], 0
	case h.head > 256 && h.head*2 > len(h.inbox):
		// compact in place; the moved-from tail is cleared so it holds no messages
		n := copy(h.inbox, h.inbox[h.head:])
		clear(h.inbox[n:])
		h.inbox, h.head = h.inbox[:n], 0
	}
	s.current = h
	h.start, h.charged = s.now, s.cfg.CPU.PerEvent
	h.node.Handle(q.it)
	s.drop(q) // handled: the node kept neither the message nor its tuples
	s.finishHandler(h)
	s.current = nil
}

func (s *Sim) finishHandler(h *host) {
	h.busyUntil = h.start + h.charged
	h.cpu += h.charged
	s.kick(h)
}

// ---- faults ----
