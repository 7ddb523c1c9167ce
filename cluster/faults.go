package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/streamha/streamha/internal/netlimit"
)

// FaultRules are the network faults a node applies to its own traffic:
// the launcher sets them through the control endpoint (POST /fault) when
// the fault schedule says so. The data plane drops messages to and from a
// blocked host and applies extra delay and loss to outgoing messages; the
// membership layer drops gossip to and from blocked hosts too, so the
// failure detector sees a partition like a real network fault.
type FaultRules struct {
	// Block lists hosts this node cannot talk to (a partition): data to
	// and from them is dropped, like a partition long enough to break the
	// TCP connections.
	Block []string `json:"block,omitempty"`
	// Stall lists hosts this node's data to is held back until the rule
	// is lifted, then delivered in order: a partition that heals before TCP
	// gives up (TCP retransmits, nothing is lost). Gossip to and from them
	// is dropped, so the failure detector sees the partition. The chaos
	// mode partitions this way.
	Stall []string `json:"stall,omitempty"`
	// Delay adds latency to outgoing messages.
	Delay []LinkDelay `json:"delay,omitempty"`
	// Loss drops outgoing messages with a probability.
	Loss []LinkLoss `json:"loss,omitempty"`
}

// LinkDelay adds Extra to messages sent to To ("" = every peer).
type LinkDelay struct {
	To    string        `json:"to,omitempty"`
	Extra time.Duration `json:"extra"`
}

// LinkLoss drops messages sent to To ("" = every peer) with probability P.
type LinkLoss struct {
	To string  `json:"to,omitempty"`
	P  float64 `json:"p"`
}

// Validate checks probabilities and delays.
func (r FaultRules) Validate() error {
	for _, d := range r.Delay {
		if d.Extra < 0 {
			return fmt.Errorf("delay to %q: negative extra %s", d.To, d.Extra)
		}
	}
	for _, l := range r.Loss {
		if l.P < 0 || l.P > 1 {
			return fmt.Errorf("loss to %q: probability %g not in [0, 1]", l.To, l.P)
		}
	}
	return nil
}

// faultLayer holds the rules in force; safe for concurrent use. The data
// plane consults it for every message (Transport.Send, each reader and
// writer), so readers take no lock: they load an immutable snapshot of the
// rules, and a snapshot with no rules answers at once.
type faultLayer struct {
	state atomic.Pointer[faultState]

	mu sync.RWMutex // serialises set; guards addrs
	// addrs maps a memberlist address ("ip:port") to its host name.
	addrs map[string]string
}

// faultState is one immutable version of the rules.
type faultState struct {
	rules FaultRules
	// none: no rule at all (the common case: nothing to check).
	none bool
	// changed is closed when these rules are replaced.
	changed chan struct{}
}

func newFaultLayer() *faultLayer {
	f := &faultLayer{addrs: map[string]string{}}
	f.state.Store(&faultState{none: true, changed: make(chan struct{})})
	return f
}

func (f *faultLayer) set(r FaultRules) {
	f.mu.Lock()
	defer f.mu.Unlock()
	none := len(r.Block) == 0 && len(r.Stall) == 0 && len(r.Delay) == 0 && len(r.Loss) == 0
	old := f.state.Swap(&faultState{rules: r, none: none, changed: make(chan struct{})})
	close(old.changed)
}

// stalled reports whether data to host is held back, and a channel
// closed at the next rule change.
func (f *faultLayer) stalled(host string) (bool, <-chan struct{}) {
	s := f.state.Load()
	return !s.none && slices.Contains(s.rules.Stall, host), s.changed
}

func (f *faultLayer) get() FaultRules { return f.state.Load().rules }

func (f *faultLayer) blocked(host string) bool {
	s := f.state.Load()
	return !s.none && slices.Contains(s.rules.Block, host)
}

// gossipCut reports whether membership traffic with host is cut: it is
// blocked or stalled.
func (f *faultLayer) gossipCut(host string) bool {
	s := f.state.Load()
	return !s.none && (slices.Contains(s.rules.Block, host) || slices.Contains(s.rules.Stall, host))
}

// outbound decides the fate of a message to host: dropped, or sent after extra delay.
func (f *faultLayer) outbound(host string) (drop bool, extra time.Duration) {
	s := f.state.Load()
	if s.none {
		return false, 0
	}
	r := &s.rules
	if slices.Contains(r.Block, host) {
		return true, 0
	}
	for _, l := range r.Loss {
		if (l.To == "" || l.To == host) && rand.Float64() < l.P {
			return true, 0
		}
	}
	for _, d := range r.Delay {
		if d.To == "" || d.To == host {
			extra += d.Extra
		}
	}
	return false, extra
}

func (f *faultLayer) learnAddr(addr, host string) {
	f.mu.Lock()
	f.addrs[addr] = host
	f.mu.Unlock()
}

// knownAddr reports whether addr is a member's gossip address.
func (f *faultLayer) knownAddr(addr string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.addrs[addr]
	return ok
}

func (f *faultLayer) blockedAddr(addr string) bool {
	s := f.state.Load()
	if len(s.rules.Block) == 0 && len(s.rules.Stall) == 0 {
		return false
	}
	f.mu.RLock()
	h, ok := f.addrs[addr]
	f.mu.RUnlock()
	return ok && (slices.Contains(s.rules.Block, h) || slices.Contains(s.rules.Stall, h))
}

// gossipTransport wraps memberlist's transport so that a partition also
// cuts membership traffic between blocked hosts.
type gossipTransport struct {
	inner   memberlist.NodeAwareTransport
	faults  *faultLayer
	packets chan *memberlist.Packet
	streams chan net.Conn
	// draining is closed first on shutdown: forwarders then discard, so
	// the inner transport's listeners never block while it shuts down.
	draining chan struct{}
	stop     chan struct{}
	wg       sync.WaitGroup
	// host names this node's loopback source address for streams it
	// dials; limit bounds the streams it accepts (gossip_limit.go).
	host      string
	limit     *netlimit.Caps
	strangers packetBudget
}

func newGossipTransport(inner memberlist.NodeAwareTransport, f *faultLayer, host string) *gossipTransport {
	t := &gossipTransport{
		inner: inner, faults: f, host: host, limit: newStreamLimit(),
		packets: make(chan *memberlist.Packet), streams: make(chan net.Conn),
		draining: make(chan struct{}), stop: make(chan struct{}),
	}
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		for {
			select {
			case p := <-inner.PacketCh():
				if p.From != nil && f.blockedAddr(p.From.String()) {
					continue
				}
				if p.From != nil && !f.knownAddr(p.From.String()) && !t.strangers.allow(time.Now()) {
					continue // junk beyond the strangers' rate (gossip_limit.go)
				}
				select {
				case t.packets <- p:
				case <-t.draining:
				}
			case <-t.stop:
				return
			}
		}
	}()
	go func() {
		defer t.wg.Done()
		for {
			select {
			case c := <-inner.StreamCh():
				if c = admitStream(t.limit, c); c == nil {
					continue
				}
				select {
				case t.streams <- c:
				case <-t.draining:
					c.Close()
				}
			case <-t.stop:
				return
			}
		}
	}()
	return t
}

func (t *gossipTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	return t.inner.FinalAdvertiseAddr(ip, port)
}

func (t *gossipTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	if t.faults.blockedAddr(addr) {
		return time.Now(), nil
	}
	return t.inner.WriteTo(b, addr)
}

func (t *gossipTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	if t.faults.gossipCut(a.Name) || t.faults.blockedAddr(a.Addr) {
		return time.Now(), nil
	}
	return t.inner.WriteToAddress(b, a)
}

func (t *gossipTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }

func (t *gossipTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	if t.faults.blockedAddr(addr) {
		return nil, fmt.Errorf("dial %s: partitioned by the fault layer", addr)
	}
	return netlimit.DialContext(context.Background(), t.host, "tcp", addr, timeout)
}

func (t *gossipTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	if t.faults.gossipCut(a.Name) || t.faults.blockedAddr(a.Addr) {
		return nil, fmt.Errorf("dial %s (%s): partitioned by the fault layer", a.Name, a.Addr)
	}
	return netlimit.DialContext(context.Background(), t.host, "tcp", a.Addr, timeout)
}

func (t *gossipTransport) StreamCh() <-chan net.Conn { return t.streams }

func (t *gossipTransport) Shutdown() error {
	close(t.draining)
	err := t.inner.Shutdown()
	close(t.stop)
	t.wg.Wait()
	return err
}
