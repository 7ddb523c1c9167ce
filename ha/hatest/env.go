package hatest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// InteractionEnv is a set of nodes of one topology stepped by a script:
// what they send stays in flight until a command delivers, drops or
// delays it, and what they arm stays pending until a command fires it or
// advances the clock past it. Every effect is written to the output of
// the command that caused it.
type InteractionEnv struct {
	exp      *experiment.Experiment
	strategy string
	topo     *ha.Topology
	hosts    []string // topology order
	nodes    map[string]*ha.Node
	crashed  map[string]bool
	// paused hosts handle nothing: what they are sent waits in flight,
	// their timers wait until they resume.
	paused map[string]bool
	// losses are standing rules that lose the next messages matching a
	// filter when they would be delivered (the lose command).
	losses []*loss
	// apart is the group of hosts a partition cuts off from the rest.
	apart map[string]bool
	// cuts are the links cut between two hosts (both directions), until heal.
	cuts map[[2]string]bool
	now  time.Duration

	inflight []*envelope
	nextID   int
	timers   []*timer
	timerSeq int

	// out is the current command's output; cur the host whose handler
	// runs, whose sink deliveries are gathered in delivered.
	out       strings.Builder
	cur       string
	delivered []uint64
	// sink is every output the sink delivered, by output seq.
	sink []uint64
	// sinkOut is every output the sink delivered, in delivery order (sink
	// from= to= lists them).
	sinkOut []ha.Tuple
	// sinkSum is the sum of the values the sink delivered.
	sinkSum float64
	// plant is added to the bugs setup plants (RunScriptPlanted).
	plant ha.Planted
}

// envelope is one message in flight: a copy made at Send (Env lends).
type envelope struct {
	id       int
	from, to string
	m        ha.Message
}

// loss loses the next n messages that match.
type loss struct {
	match func(*envelope) bool
	n     int
}

// timer is one pending timer of a host.
type timer struct {
	host, name string
	at         time.Duration
	seq        int
}

// NewInteractionEnv returns an empty environment: a script's first
// command, setup, builds its nodes.
func NewInteractionEnv() *InteractionEnv { return &InteractionEnv{} }

// hostEnv is one node's ha.Env.
type hostEnv struct {
	e    *InteractionEnv
	host string
	rng  *rand.Rand
}

func (h *hostEnv) Now() time.Duration { return h.e.now }
func (h *hostEnv) Rand() *rand.Rand   { return h.rng }
func (h *hostEnv) Work(int, int)      {}

// Send copies m and its Tuples (Send lends them for the call only) and
// puts the copy in flight.
func (h *hostEnv) Send(to string, m *ha.Message) {
	e := h.e
	c := *m
	c.Tuples = slices.Clone(m.Tuples)
	e.nextID++
	env := &envelope{id: e.nextID, from: h.host, to: to, m: c}
	e.inflight = append(e.inflight, env)
	e.printf("  sent %s\n", env)
}

// SetTimer arms a pending timer. The source's generator timer is not
// printed: it is armed after every emission.
func (h *hostEnv) SetTimer(d time.Duration, name string) {
	e := h.e
	e.timerSeq++
	e.timers = append(e.timers, &timer{host: h.host, name: name, at: e.now + d, seq: e.timerSeq})
	if name != ha.GenTimer {
		e.printf("  %s: timer %s in %s\n", h.host, name, d)
	}
}

// Trace prints the event, gathering the sink's deliveries into one line
// per handler.
func (h *hostEnv) Trace(ev ha.Event) {
	e := h.e
	if ev.Kind == ha.EvDeliver {
		e.delivered = append(e.delivered, ev.Tuple.Seq)
		e.sink = append(e.sink, ev.Tuple.Seq)
		e.sinkOut = append(e.sinkOut, *ev.Tuple)
		e.sinkSum += ev.Tuple.Value
		return
	}
	if ev.Kind == ha.EvEmit {
		return
	}
	e.printf("  %s\n", DescribeEvent(ev))
}

func (e *InteractionEnv) printf(format string, args ...any) {
	fmt.Fprintf(&e.out, format, args...)
}

// step runs f as a handler of host, then prints the sink's deliveries it
// made.
func (e *InteractionEnv) step(host string, f func()) {
	e.cur = host
	f()
	if len(e.delivered) > 0 {
		e.printf("  %s: deliver seq=%s\n", host, ranges(e.delivered))
		e.delivered = e.delivered[:0]
	}
	e.cur = ""
}

// node returns the node of host or an error naming the hosts there are.
func (e *InteractionEnv) node(host string) (*ha.Node, error) {
	if e.nodes == nil {
		return nil, fmt.Errorf("no nodes: run setup first")
	}
	n, ok := e.nodes[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q (hosts: %s)", host, strings.Join(e.hosts, ", "))
	}
	return n, nil
}

// deliver hands env to its receiver, or drops it if the receiver crashed.
func (e *InteractionEnv) deliver(env *envelope) {
	if e.crashed[env.to] {
		e.printf("%s (dropped: %s crashed)\n", env, env.to)
		return
	}
	for _, l := range e.losses {
		if l.n > 0 && l.match(env) {
			l.n--
			e.printf("%s (lost)\n", env)
			return
		}
	}
	if e.apart[env.from] != e.apart[env.to] || e.cuts[[2]string{env.from, env.to}] {
		e.printf("%s (dropped: partition)\n", env)
		return
	}
	n, ok := e.nodes[env.to]
	if !ok {
		e.printf("%s (dropped: no such host)\n", env)
		return
	}
	e.printf("%s\n", env)
	e.step(env.to, func() { n.Deliver(&env.m) })
}

// fireTimer runs t on its host, unless the host crashed.
func (e *InteractionEnv) fireTimer(t *timer) {
	if e.crashed[t.host] {
		return
	}
	if t.name != ha.GenTimer {
		e.printf("%s: fire %s\n", t.host, t.name)
	}
	n := e.nodes[t.host]
	e.step(t.host, func() { n.Fire(t.name) })
}

// advance moves the clock forward by d, firing every timer that falls due
// on the way, in (time, arming) order, at its time.
func (e *InteractionEnv) advance(d time.Duration) {
	end := e.now + d
	for {
		i := e.nextTimer(end)
		if i < 0 {
			break
		}
		t := e.timers[i]
		e.timers = slices.Delete(e.timers, i, i+1)
		e.now = max(e.now, t.at)
		e.fireTimer(t)
	}
	e.now = end
}

// nextTimer is the index of the earliest timer due by end, or -1.
func (e *InteractionEnv) nextTimer(end time.Duration) int {
	best := -1
	for i, t := range e.timers {
		if t.at > end || e.crashed[t.host] || e.paused[t.host] {
			continue
		}
		if best < 0 || t.at < e.timers[best].at || (t.at == e.timers[best].at && t.seq < e.timers[best].seq) {
			best = i
		}
	}
	return best
}
