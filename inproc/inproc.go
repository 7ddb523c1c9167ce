package inproc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// Crash is a crash fault: Host stops at At (time since the start).
type Crash struct {
	At   time.Duration
	Host string
}

// Config is one in-process run.
type Config struct {
	// Seed seeds every node's random source (source data included).
	Seed     uint64
	Topology *ha.Topology
	// NewStrategy builds the strategy. It is called once per host, as
	// every process of a cluster builds its own: a strategy may keep state
	// shared by its hooks in the Strategy value without locking.
	NewStrategy func() (ha.Strategy, error)
	Source      ha.SourceSpec
	// End is the longest the run lasts (wall time since the start).
	End time.Duration
	// StopWhenDrained ends the run before End once every source is done
	// and no data message is queued or being handled anywhere.
	StopWhenDrained bool
	// DetectAfter is how long after a crash every other host is told the
	// crashed host is dead (a perfect timeout detector); default
	// experiment.DefaultTimeout.
	DetectAfter time.Duration
	// Crashes are crash faults.
	Crashes []Crash
	// Pauses and Partitions are the other faults (faults.go).
	Pauses     []Pause
	Partitions []Partition
	NoFencing  bool
	// TraceEmits traces every tuple every host emits (ha.NodeConfig.TraceEmits).
	TraceEmits bool
}

// Outcome is what a run produced.
type Outcome struct {
	// Trace is every event, ordered by time (stable for equal times).
	Trace *ha.Trace
	// Wall is how long the run took.
	Wall time.Duration
	// LastData is when the last data message finished being handled by any
	// host: the end of useful work when StopWhenDrained is set.
	LastData time.Duration
	// Handled is the number of mailbox items (messages, timers,
	// detections) the hosts handled.
	Handled int64
}

// ErrConfig is returned (wrapped) for an unusable configuration.
var ErrConfig = errors.New("inproc: invalid configuration")

type itemKind uint8

const (
	itInput itemKind = iota // an input for the node: Handle dispatches it
	itCrash
	itPause
	itStop
)

// item is one entry of a host's mailbox: an input for its node, or an
// instruction to the host's goroutine (crash, pause for d, stop).
type item struct {
	kind itemKind
	in   ha.Input
	d    time.Duration
}

// mailbox is an unbounded queue with a wake-up signal: senders never block,
// so request/response cycles between hosts (acks, resumes) cannot deadlock.
type mailbox struct {
	mu    sync.Mutex
	items []item
	wake  chan struct{}
}

func (b *mailbox) put(it item) {
	b.mu.Lock()
	b.items = append(b.items, it)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take swaps the queued items out, reusing spare as the new queue.
func (b *mailbox) take(spare []item) []item {
	b.mu.Lock()
	its := b.items
	b.items = spare[:0]
	b.mu.Unlock()
	return its
}

type host struct {
	r       *runtime
	name    string
	node    *ha.Node
	box     mailbox
	rng     *rand.Rand
	trace   ha.Trace
	crashed atomic.Bool
	crashAt atomic.Int64
	cpu     time.Duration
	handled int64
	// pending timers by id, so the run can stop them at its end
	tmu       sync.Mutex
	timers    map[uint64]*time.Timer
	nextTimer uint64
}

type runtime struct {
	cfg      Config
	start    time.Time
	hosts    map[string]*host
	order    []*host
	inflight atomic.Int64 // data messages queued or being handled
	gens     atomic.Int64 // source generator timers pending
	lastData atomic.Int64 // ns since start
	stopping atomic.Bool
	faults   faultState // pauses and partitions (faults.go)
}

// Run runs cfg until cfg.End (or until drained, see Config.StopWhenDrained)
// or until ctx is done, then stops every goroutine it started.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	if cfg.Topology == nil || cfg.NewStrategy == nil {
		return nil, fmt.Errorf("%w: topology and strategy constructor are required", ErrConfig)
	}
	if err := cfg.Topology.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.End <= 0 {
		return nil, fmt.Errorf("%w: end must be positive, got %s", ErrConfig, cfg.End)
	}
	if cfg.DetectAfter < 0 {
		return nil, fmt.Errorf("%w: detect_after must not be negative, got %s", ErrConfig, cfg.DetectAfter)
	}
	if cfg.DetectAfter == 0 {
		cfg.DetectAfter = experiment.DefaultTimeout
	}
	r := &runtime{cfg: cfg, hosts: map[string]*host{}}
	for _, name := range cfg.Topology.Hosts() {
		h := &host{r: r, name: name, rng: experiment.Seeded(cfg.Seed, "node", name)}
		h.box.wake = make(chan struct{}, 1)
		r.hosts[name] = h
		r.order = append(r.order, h)
	}
	for i, c := range cfg.Crashes {
		if _, ok := r.hosts[c.Host]; !ok {
			return nil, fmt.Errorf("%w: crashes[%d]: unknown host %q", ErrConfig, i, c.Host)
		}
	}
	if err := r.checkFaults(); err != nil {
		return nil, err
	}
	for _, h := range r.order {
		st, err := cfg.NewStrategy()
		if err != nil {
			return nil, fmt.Errorf("host %s: %w", h.name, err)
		}
		n, err := ha.NewNode(ha.NodeConfig{
			Host: h.name, Topology: cfg.Topology, Env: &env{h: h},
			Strategy: st, Source: cfg.Source, NoFencing: cfg.NoFencing, TraceEmits: cfg.TraceEmits,
		})
		if err != nil {
			return nil, err
		}
		h.node = n
	}

	r.start = time.Now()
	var wg sync.WaitGroup
	for _, h := range r.order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.loop()
		}()
	}
	var faults []*time.Timer
	for _, c := range cfg.Crashes {
		faults = append(faults, time.AfterFunc(c.At, func() { r.crash(c.Host) }))
	}
	faults = append(faults, r.scheduleFaults()...)

	end := time.NewTimer(cfg.End)
	defer end.Stop()
	var poll <-chan time.Time
	if cfg.StopWhenDrained {
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		poll = tk.C
	}
	var cerr error
wait:
	for {
		select {
		case <-ctx.Done():
			cerr = ctx.Err()
			break wait
		case <-end.C:
			break wait
		case <-poll:
			if r.drained() {
				break wait
			}
		}
	}
	wall := time.Since(r.start)
	r.stopping.Store(true)
	for _, t := range faults {
		t.Stop()
	}
	r.stopFaults()
	for _, h := range r.order {
		h.box.put(item{kind: itStop})
	}
	wg.Wait()
	for _, h := range r.order {
		h.stopTimers()
	}
	return r.outcome(wall), cerr
}

// drained reports whether every source is done, no data is in flight and
// no partition or pause is in force (the hosts it cut off may yet repair
// what it lost).
func (r *runtime) drained() bool {
	return r.gens.Load() == 0 && r.inflight.Load() == 0 && time.Since(r.start) >= r.cfg.Source.Duration && !r.faulted()
}

func (r *runtime) now() time.Duration { return time.Since(r.start) }

func (r *runtime) crash(name string) {
	h := r.hosts[name]
	if h.crashed.Load() {
		return
	}
	h.crashAt.Store(int64(r.now()))
	h.crashed.Store(true)
	h.box.put(item{kind: itCrash})
	time.AfterFunc(r.cfg.DetectAfter, func() {
		if r.stopping.Load() {
			return
		}
		for _, o := range r.order {
			if o != h && !o.crashed.Load() {
				o.box.put(item{in: ha.Input{Kind: ha.InputPeerDown, Name: name}})
			}
		}
	})
}

func (r *runtime) outcome(wall time.Duration) *Outcome {
	out := &Outcome{Wall: wall, LastData: time.Duration(r.lastData.Load())}
	var all []ha.Event
	for _, h := range r.order {
		all = slices.AppendSeq(all, h.trace.All())
		out.Handled += h.handled
	}
	r.faults.mu.Lock()
	all = append(all, r.faults.events...)
	r.faults.mu.Unlock()
	slices.SortStableFunc(all, func(a, b ha.Event) int {
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		}
		return 0
	})
	end := max(wall, r.cfg.End)
	if r.cfg.StopWhenDrained {
		end = wall
	}
	for _, h := range r.order {
		st := h.node.Stats()
		st.CPU = int64(h.cpu)
		all = append(all, ha.Event{T: end, Kind: ha.EvStats, Host: h.name, Stats: &st})
	}
	out.Trace = ha.NewTrace(all...)
	return out
}

// loop is the host's goroutine: it handles its mailbox one item at a time
// until told to stop. A crashed host discards everything it receives.
func (h *host) loop() {
	n := h.node
	h.timed(n.Start)
	var spare []item
	for {
		<-h.box.wake
		its := h.box.take(spare)
		for i, it := range its {
			its[i] = item{}
			if it.kind == itStop {
				h.discard(its[i+1:])
				return
			}
			if h.crashed.Load() {
				if it.kind == itCrash {
					h.trace.Add(ha.Event{T: time.Duration(h.crashAt.Load()), Kind: ha.EvCrash, Host: h.name})
				}
				h.discard([]item{it})
				continue
			}
			switch it.kind {
			case itInput:
				in := it.in
				h.timed(func() { n.Handle(in) })
				switch {
				case in.Kind == ha.InputMessage:
					if in.Msg.Kind == ha.KindData {
						h.r.noteData()
					}
					copies.release(in.Msg)
				case in.Kind == ha.InputTimer && in.Name == ha.GenTimer:
					// after Fire, which arms the next wake-up while more is due
					h.r.gens.Add(-1)
				}
			case itPause:
				h.pause(it.d)
			}
			h.handled++
		}
		spare = its
	}
}

// discard drops items unhandled, keeping the runtime's counters right.
func (h *host) discard(its []item) {
	for _, it := range its {
		if it.kind != itInput {
			continue
		}
		switch in := it.in; {
		case in.Kind == ha.InputMessage:
			if in.Msg.Kind == ha.KindData {
				h.r.inflight.Add(-1)
			}
			copies.release(in.Msg)
		case in.Kind == ha.InputTimer && in.Name == ha.GenTimer:
			h.r.gens.Add(-1)
		}
	}
}

func (r *runtime) noteData() {
	now := int64(r.now())
	for {
		old := r.lastData.Load()
		if now <= old || r.lastData.CompareAndSwap(old, now) {
			break
		}
	}
	r.inflight.Add(-1)
}

// timed runs one handler and adds its duration to the host's busy time.
func (h *host) timed(f func()) {
	t0 := time.Now()
	f()
	h.cpu += time.Since(t0)
}

func (h *host) stopTimers() {
	h.tmu.Lock()
	defer h.tmu.Unlock()
	for _, t := range h.timers {
		t.Stop()
	}
	clear(h.timers)
}

// env is one host's ha.Env. Every method but Send's delivery runs on the
// host's own goroutine.
type env struct{ h *host }

func (e *env) Now() time.Duration { return e.h.r.now() }

func (e *env) Rand() *rand.Rand { return e.h.rng }

func (e *env) Trace(ev ha.Event) { e.h.trace.Add(ev) }

// Work is counted by the node itself (NodeStats.Work); busy time is measured.
func (e *env) Work(ops, bytes int) {}

// receiver is the host a message to `to` is handed to, or nil when there
// is none: an unknown host, this host itself, a crashed one, or one a
// partition cuts off from this host.
func (e *env) receiver(to string) *host {
	dst := e.h.r.hosts[to]
	if dst == nil || dst == e.h || dst.crashed.Load() || e.h.r.cut(e.h.name, to) {
		return nil
	}
	return dst
}

// hand queues c, a pooled message, in dst's mailbox, counting a data
// message as in flight.
func (e *env) hand(dst *host, c *ha.Message) {
	if c.Kind == ha.KindData {
		e.h.r.inflight.Add(1)
	}
	dst.box.put(item{in: ha.Input{Kind: ha.InputMessage, Msg: c}})
}

// Send hands a copy of m, Tuples included, to the destination's mailbox,
// made in memory that goes back to a pool once the receiver has handled it:
// the node lends m for the call only, and keeps no delivered message or
// tuple (ha.Env), so sent messages are not fresh memory.
func (e *env) Send(to string, m *ha.Message) {
	if dst := e.receiver(to); dst != nil {
		e.hand(dst, copies.copy(m))
	}
}

func (e *env) SetTimer(d time.Duration, name string) {
	h := e.h
	if h.r.stopping.Load() {
		return
	}
	if name == ha.GenTimer {
		h.r.gens.Add(1)
	}
	h.tmu.Lock()
	defer h.tmu.Unlock()
	h.nextTimer++
	id := h.nextTimer
	if h.timers == nil {
		h.timers = map[uint64]*time.Timer{}
	}
	h.timers[id] = time.AfterFunc(d, func() {
		h.tmu.Lock()
		delete(h.timers, id)
		h.tmu.Unlock()
		h.box.put(item{in: ha.Input{Kind: ha.InputTimer, Name: name}})
	})
}
