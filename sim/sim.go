package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

func (s *Sim) startFault(i int) {
	f := s.cfg.Faults[i]
	switch f.Kind {
	case experiment.FaultCrash:
		h := s.hosts[f.Host]
		if h.state == crashed {
			return
		}
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvCrash, Host: f.Host})
		h.state = crashed
		for _, q := range h.inbox[h.head:] {
			s.drop(q)
		}
		h.inbox, h.head = nil, 0
		s.unreachable(h)
	case experiment.FaultPause:
		h := s.hosts[f.Host]
		if h.state != up {
			return
		}
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvPause, Host: f.Host, N: int64(f.For)})
		h.state = paused
		s.unreachable(h)
		s.push(&event{at: s.now + f.For, kind: evFaultEnd, f: i})
	case experiment.FaultPartition, experiment.FaultDelay, experiment.FaultLoss, experiment.FaultCorrupt:
		s.active = append(s.active, i)
		if f.Kind == experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvPartition, Note: fmt.Sprint(f.Groups)})
			s.partitionDetect(f)
		} else {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvLinkFault, Host: f.From, Peer: f.To, N: int64(f.For), Note: linkFaultNote(f)})
		}
		s.push(&event{at: s.now + f.For, kind: evFaultEnd, f: i})
	}
}

func (s *Sim) endFault(i int) {
	f := s.cfg.Faults[i]
	switch f.Kind {
	case experiment.FaultPause:
		h := s.hosts[f.Host]
		if h.state != paused {
			return
		}
		h.state = up
		h.incident++
		s.trace.Add(ha.Event{T: s.now, Kind: ha.EvResume, Host: f.Host})
		if h.busyUntil < s.now {
			h.busyUntil = s.now
		}
		s.kick(h)
		s.reachable(h)
	default:
		s.active = slices.DeleteFunc(s.active, func(j int) bool { return j == i })
		if f.Kind != experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvLinkHeal, Host: f.From, Peer: f.To, Note: linkFaultNote(f)})
		}
		if f.Kind == experiment.FaultPartition {
			s.trace.Add(ha.Event{T: s.now, Kind: ha.EvHeal, Note: fmt.Sprint(f.Groups)})
			for _, g := range f.Groups {
				for _, name := range g {
					h := s.hosts[name]
					if h == nil || h.state != up {
						// A host that crashed or paused meanwhile keeps
						// the detections of that failure.
						continue
					}
					h.incident++
					s.reachableAfterHeal(h)
				}
			}
		}
	}
}

// reachableAfterHeal is reachable for a host whose partition healed while
// other partitions may still be in force: an observer still cut off from
// h by one keeps (or, its pending detection voided by the new incident,
// comes to) its declaration of h's death; the others see h alive again.
// Healing one of two overlapping partitions used to revive h for every
// observer, and observers still cut off from it never declared it dead.
func (s *Sim) reachableAfterHeal(h *host) {
	for _, o := range s.order {
		if o == h || o.state == crashed {
			continue
		}
		end, cut := s.partitionCut(o.name, h.name)
		switch {
		case !cut && h.declared[o.name]:
			delete(h.declared, o.name)
			s.push(&event{at: s.now + s.cfg.Detector.Heartbeat, kind: evAlive, host: o, peer: h})
		case cut && !h.declared[o.name]:
			if delay := s.detectDelay("detect-part", o, h); s.now+delay < end {
				s.push(&event{at: s.now + delay, kind: evDetect, host: o, peer: h, inc: h.incident, part: true})
			}
		}
	}
}

// partitionCut reports whether a partition in force separates hosts a
// and b, and when the last such partition ends.
func (s *Sim) partitionCut(a, b string) (end time.Duration, cut bool) {
	for _, i := range s.active {
		f := &s.cfg.Faults[i]
		if f.Kind != experiment.FaultPartition {
			continue
		}
		ga, gb := -1, -1
		for gi, g := range f.Groups {
			if slices.Contains(g, a) {
				ga = gi
			}
			if slices.Contains(g, b) {
				gb = gi
			}
		}
		if ga >= 0 && gb >= 0 && ga != gb {
			cut, end = true, max(end, f.At+f.For)
		}
	}
	return end, cut
}

// linkFaultNote says what a delay, loss or corrupt fault does, for its
// trace events: "delay +30ms", "loss p=0.3", "corrupt p=0.1".
func linkFaultNote(f experiment.Fault) string {
	if f.Kind == experiment.FaultDelay {
		return fmt.Sprintf("delay +%s", f.Delay)
	}
	return fmt.Sprintf("%s p=%g", f.Kind, f.Loss)
}

// unreachable schedules every other live host's detection of h.
func (s *Sim) unreachable(h *host) {
	h.incident++
	for _, o := range s.order {
		if o == h || o.state == crashed {
			continue
		}
		s.scheduleDetect(o, h)
	}
}

func (s *Sim) scheduleDetect(observer, peer *host) {
	s.push(&event{at: s.now + s.detectDelay("detect", observer, peer), kind: evDetect, host: observer, peer: peer, inc: peer.incident})
}

// detectDelay is how long observer takes to declare peer dead: the timeout
// plus a heartbeat phase seeded per (label, observer, peer, incident).
func (s *Sim) detectDelay(label string, observer, peer *host) time.Duration {
	d := s.cfg.Detector
	if d.Heartbeat <= 0 {
		return d.Timeout
	}
	r := experiment.Seeded(s.cfg.Seed, label, observer.name, peer.name, fmt.Sprint(peer.incident))
	return d.Timeout + time.Duration(r.Int64N(int64(d.Heartbeat)))
}

// reachable tells observers that declared h dead that it is back, one heartbeat later.
func (s *Sim) reachable(h *host) {
	for _, o := range s.order {
		if h.declared[o.name] {
			delete(h.declared, o.name)
			s.push(&event{at: s.now + s.cfg.Detector.Heartbeat, kind: evAlive, host: o, peer: h})
		}
	}
}

func (s *Sim) partitionDetect(f experiment.Fault) {
	group := map[string]int{}
	for gi, g := range f.Groups {
		for _, name := range g {
			group[name] = gi
		}
	}
	for _, o := range s.order {
		go1, ok1 := group[o.name]
		if !ok1 || o.state == crashed {
			continue
		}
		for _, p := range s.order {
			gp, ok2 := group[p.name]
			if !ok2 || gp == go1 || p.state == crashed {
				continue
			}
			// the peer is unreachable from o: o declares it after the
			// detection delay, if the partition lasts that long
			if delay := s.detectDelay("detect-part", o, p); delay < f.For {
				s.push(&event{at: s.now + delay, kind: evDetect, host: o, peer: p, inc: p.incident, part: true})
			}
		}
	}
}

// linkFaults returns what the faults in force do to a message from a to
// b: cut by a partition, extra delay, loss probability and the probability
// that a message with a Body is corrupted — one pass over the active faults.
func (s *Sim) linkFaults(from, to string) (cut bool, extra time.Duration, loss, corruptP float64) {
	for _, i := range s.active {
		f := &s.cfg.Faults[i]
		switch f.Kind {
		case experiment.FaultPartition:
			ga, gb := -1, -1
			for gi, g := range f.Groups {
				if slices.Contains(g, from) {
					ga = gi
				}
				if slices.Contains(g, to) {
					gb = gi
				}
			}
			if ga >= 0 && gb >= 0 && ga != gb {
				cut = true
			}
		case experiment.FaultDelay:
			if f.OnLink(from, to) {
				extra += f.Delay
			}
		case experiment.FaultLoss:
			if f.OnLink(from, to) {
				loss = 1 - (1-loss)*(1-f.Loss)
			}
		case experiment.FaultCorrupt:
			if f.OnLink(from, to) {
				corruptP = 1 - (1-corruptP)*(1-f.Loss)
			}
		}
	}
	return
}

// ---- the Env of one host ----

type env struct {
	s *Sim
	h *host
	// the last destination, so a node sending to the same host again skips the name lookup
	lastTo  string
	lastDst *host
}

func (e *env) Now() time.Duration { return e.h.start + e.h.charged }

func (e *env) Rand() *rand.Rand { return e.h.rng }

func (e *env) Trace(ev ha.Event) { e.s.trace.Add(ev) }

func (e *env) Work(ops, bytes int) {
	c := e.s.cfg.CPU
	e.h.charged += time.Duration(ops)*c.PerOp + time.Duration(bytes)*c.PerByte
}

func (e *env) SetTimer(d time.Duration, name string) {
	ev := e.s.newEvent()
	ev.at, ev.kind, ev.host, ev.it = e.Now()+d, evTimer, e.h, ha.Input{Kind: ha.InputTimer, Name: name}
	e.s.push(ev)
}

// Send sends a copy of m, Tuples included, in recycled memory: the node
// lends m for the call only (ha.Env), and the copy goes back to the
// recycler once the receiver handled it or the network dropped it.
func (e *env) Send(to string, m *ha.Message) { e.send(to, e.s.pool.copyMessage(m)) }

// send schedules the arrival of m at host to, if the network delivers it;
// m belongs to the recycler.
func (e *env) send(to string, m *ha.Message) {
	s := e.s
	dst, arr, sent := e.transit(to, m)
	own := true
	switch {
	case sent == nil:
		s.pool.release(m)
		return
	case sent != m:
		// a corrupted copy sharing m's Tuples: both are left to the garbage collector
		own = false
	}
	ev := s.newEvent()
	ev.at, ev.kind, ev.host, ev.own, ev.it = arr, evArrive, dst, own, ha.Input{Kind: ha.InputMessage, Msg: sent}
	s.push(ev)
}

// transit models m's trip to host to: where and when it arrives and what
// arrives (m, or a corrupted copy), or nil when it is lost on the way.
func (e *env) transit(to string, m *ha.Message) (*host, time.Duration, *ha.Message) {
	s := e.s
	dst := e.lastDst
	if dst == nil || to != e.lastTo {
		var ok bool
		if dst, ok = s.hosts[to]; !ok {
			return nil, 0, nil
		}
		e.lastTo, e.lastDst = to, dst
	}
	if dst == e.h {
		return nil, 0, nil
	}
	if e.h.links == nil {
		e.h.links = make([]*link, len(s.order))
	}
	l := e.h.links[dst.idx]
	if l == nil {
		l = &link{rng: experiment.SeededPCG(s.cfg.Seed, "link", e.h.name, to)}
		e.h.links[dst.idx] = l
	}
	dep := e.Now()
	cut, extra, loss, corruptP := s.linkFaults(e.h.name, to)
	n := s.cfg.Network
	loss = 1 - (1-loss)*(1-n.Loss)
	// draw in a fixed pattern so one message's fate never shifts another's
	j := unitFloat(l.rng)
	lost := unitFloat(l.rng) < loss
	if cut || lost {
		return nil, 0, nil
	}
	if p := corruptP; p > 0 && len(m.Body) > 0 {
		if l.crng == nil {
			l.crng = experiment.Seeded(s.cfg.Seed, "corrupt", e.h.name, to)
		}
		if l.crng.Float64() < p {
			m = corrupt(m, l.crng)
			s.trace.Add(ha.Event{T: dep, Kind: ha.EvNote, Host: e.h.name, Peer: to, Seq: m.Seq,
				Note: "fault: corrupted one byte of a " + m.Type + " message"})
		}
	}
	tx := dep
	if n.Bandwidth > 0 {
		tx = max(dep, l.txFree) + time.Duration(float64(m.WireSize()*8)/n.Bandwidth*float64(time.Second))
		l.txFree = tx
	}
	arr := tx + n.Latency + extra + time.Duration(j*float64(n.Jitter))
	if arr < l.lastArr {
		arr = l.lastArr
	}
	l.lastArr = arr
	return dst, arr, m
}

// corrupt returns a copy of m whose Body has one byte flipped (the sender
// may keep the original to resend it).
func corrupt(m *ha.Message, r *rand.Rand) *ha.Message {
	c := *m
	c.Body = append([]byte(nil), m.Body...)
	c.Body[r.IntN(len(c.Body))] ^= byte(1 + r.IntN(255))
	return &c
}
