package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/internal/netlimit"
)

// TransportConfig configures the TCP data plane of one node.
type TransportConfig struct {
	// Host is this node's host name (sent in every handshake).
	Host string
	// Keys authenticate frames; the zero Keys turn authentication off.
	Keys Keys
	// Listen is the TCP address to accept peers on ("127.0.0.1:0" picks a port).
	Listen string
	// Deliver is called from a connection's reader goroutine for every
	// verified message, in arrival order per connection. It may block:
	// that is the backpressure on the sender.
	Deliver func(from string, m *ha.Message)
	// Resolve returns a host's data address, or "" while it is unknown
	// (messages to it wait in its queue).
	Resolve func(host string) string
	// MaxQueue bounds each peer's outbound queue, in messages (default
	// 65536). When a peer's queue is full new messages to it are dropped
	// and counted: a node never blocks on a slow or dead peer, which is the
	// Env contract (delivery may fail silently).
	MaxQueue int
	// MaxFrame bounds an incoming frame's payload in bytes (default
	// MaxFrame); data and control frames have lower bounds of their own
	// (MaxDataFrame, MaxControlFrame).
	MaxFrame int
	// Peer reports whether host may connect to this node: a hello naming
	// any other host (or this node itself) closes the connection before a
	// frame is read. Nil accepts every host but this node's own name.
	Peer func(host string) bool
	// MaxHandshakes bounds the connections accepted but not yet through
	// their hello (default 64); more are closed at once. HandshakeTimeout
	// bounds the time one of them may take (default 2 s).
	MaxHandshakes    int
	HandshakeTimeout time.Duration
	// MaxHandshakesPerAddr bounds, within MaxHandshakes, the connections
	// from one source address still in their handshake (default 8), so
	// one flooding machine cannot take every slot from the cluster's
	// hosts. Loopback counts like any address: the hosts of a loopback
	// cluster dial from addresses of their own (netlimit.LoopbackFor), so
	// a local process flooding from 127.0.0.1 holds at most this many.
	MaxHandshakesPerAddr int
	// DialTimeout bounds a connection attempt (default 1 s); a failed peer
	// is retried every RetryInterval (default 100 ms) while messages wait.
	DialTimeout   time.Duration
	RetryInterval time.Duration
	// Logger receives connection errors (default: discard).
	Logger *log.Logger
}

// TransportStats are a transport's counters.
type TransportStats struct {
	SentMessages  int64 // messages written to a connection
	SentBytes     int64 // bytes written, framing included
	RecvMessages  int64 // verified messages delivered
	Dropped       int64 // messages dropped: queue full or a write failed
	FaultDropped  int64 // messages dropped by the fault layer (partition, loss)
	Rejected      int64 // connections closed for bad authentication, bad frames or a bad handshake
	Overflowed    int64 // of Rejected: connections closed unread because MaxHandshakes were pending
	QueuedPending int64 // messages waiting in outbound queues now
}

// Transport is the TCP data plane of one node: one outbound connection per
// peer, fed by a bounded FIFO queue and written by one goroutine per peer
// (frames are batched and flushed when the queue is empty), and one reader
// goroutine per accepted connection. Links are FIFO like the simulator's.
type Transport struct {
	cfg    TransportConfig
	ln     net.Listener
	faults *faultLayer

	mu     sync.Mutex
	peers  map[string]*peer
	conns  map[net.Conn]struct{}
	closed bool

	stop       chan struct{}
	wg         sync.WaitGroup
	handshakes chan struct{}  // one token per connection before its hello
	perAddr    map[string]int // connections in their handshake per source address (under mu)

	noise *noiseLog // rate-limited log of refused connections

	sent, sentBytes, recv, dropped, faultDropped, rejected, pending, overflow atomic.Int64
}

type queued struct {
	m   *ha.Message
	due time.Time // zero: now
}

type peer struct {
	name   string
	mu     sync.Mutex
	q      []queued
	notify chan struct{}
}

// NewTransport listens on cfg.Listen and returns the running transport.
func NewTransport(cfg TransportConfig) (*Transport, error) {
	if cfg.Host == "" || cfg.Deliver == nil || cfg.Resolve == nil {
		return nil, errors.New("transport: Host, Deliver and Resolve are required")
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 1 << 16
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = MaxFrame
	}
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = 64
	}
	if cfg.MaxHandshakesPerAddr <= 0 {
		cfg.MaxHandshakesPerAddr = 8
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 2 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = time.Second
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("data plane: listen on %s: %w", cfg.Listen, err)
	}
	t := &Transport{
		cfg: cfg, ln: ln, faults: newFaultLayer(),
		peers: map[string]*peer{}, conns: map[net.Conn]struct{}{}, stop: make(chan struct{}),
		handshakes: make(chan struct{}, cfg.MaxHandshakes), perAddr: map[string]int{},
		noise: &noiseLog{l: cfg.Logger},
	}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// Addr is the address the transport listens on.
func (t *Transport) Addr() string { return t.ln.Addr().String() }

// SetFaults replaces the fault rules in force.
func (t *Transport) SetFaults(r FaultRules) { t.faults.set(r) }

// Faults returns the fault rules in force.
func (t *Transport) Faults() FaultRules { return t.faults.get() }

// Stats returns the transport's counters.
func (t *Transport) Stats() TransportStats {
	return TransportStats{
		SentMessages: t.sent.Load(), SentBytes: t.sentBytes.Load(), RecvMessages: t.recv.Load(),
		Dropped: t.dropped.Load(), FaultDropped: t.faultDropped.Load(), Rejected: t.rejected.Load(),
		Overflowed:    t.overflow.Load(),
		QueuedPending: t.pending.Load(),
	}
}

// Send queues m for to. It never blocks: see TransportConfig.MaxQueue.
// The message must not be modified afterwards.
func (t *Transport) Send(to string, m *ha.Message) {
	if to == t.cfg.Host {
		return
	}
	drop, extra := t.faults.outbound(to)
	if drop {
		t.faultDropped.Add(1)
		return
	}
	q := queued{m: m}
	if extra > 0 {
		q.due = time.Now().Add(extra)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	p := t.peers[to]
	if p == nil {
		p = &peer{name: to, notify: make(chan struct{}, 1)}
		t.peers[to] = p
		t.wg.Add(1)
		go t.runPeer(p)
	}
	t.mu.Unlock()
	p.mu.Lock()
	if len(p.q) >= t.cfg.MaxQueue {
		p.mu.Unlock()
		t.dropped.Add(1)
		return
	}
	p.q = append(p.q, q)
	p.mu.Unlock()
	t.pending.Add(1)
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// maxSpareQueue bounds the capacity of a written batch kept for reuse (a
// backlog of a peer that was away is not kept).
const maxSpareQueue = 4096

// take waits for queued messages and returns them all, or nil when the
// transport stops. The writer hands back its last batch, written: it
// becomes the queue's array, so Send appends without allocating (a fresh
// queue after every take cost an allocation per message sent).
func (p *peer) take(stop <-chan struct{}, done []queued) []queued {
	if cap(done) > maxSpareQueue {
		done = nil // garbage as a whole: no need to clear it first
	} else {
		clear(done)
		done = done[:0]
	}
	for {
		p.mu.Lock()
		if len(p.q) > 0 {
			b := p.q
			p.q = done
			p.mu.Unlock()
			return b
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-stop:
			return nil
		}
	}
}

func (p *peer) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q) == 0
}

func (t *Transport) sleep(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-t.stop:
		return false
	}
}

func (t *Transport) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		c.Close()
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *Transport) untrack(c net.Conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	c.Close()
}

// runPeer is the writer goroutine of one peer.
func (t *Transport) runPeer(p *peer) {
	defer t.wg.Done()
	var (
		conn    net.Conn
		fw      *frameWriter
		lastLog time.Time
		fails   int
	)
	defer func() {
		if conn != nil {
			t.untrack(conn)
		}
	}()
	var batch []queued
	for {
		if batch = p.take(t.stop, batch); batch == nil {
			return
		}
		for i := 0; i < len(batch); i++ {
			q := batch[i]
			if !q.due.IsZero() {
				if w := time.Until(q.due); w > 0 {
					if conn != nil && fw.Flush() != nil {
						t.untrack(conn)
						conn = nil
					}
					if !t.sleep(w) {
						return
					}
				}
			}
			if !t.waitUnstalled(p.name, conn, fw) {
				return
			}
			for conn == nil {
				c, w, err := t.dial(p.name)
				if err == nil {
					if !t.track(c) {
						return
					}
					conn, fw, fails = c, w, 0
					break
				}
				fails++
				if time.Since(lastLog) > 5*time.Second {
					t.cfg.Logger.Printf("data plane: peer %s unreachable (%d attempts, %d messages waiting): %v", p.name, fails, len(batch)-i, err)
					lastLog = time.Now()
				}
				if !t.sleep(t.cfg.RetryInterval) {
					return
				}
			}
			err := fw.WriteMessage(q.m)
			t.pending.Add(-1)
			if err != nil {
				t.dropped.Add(1)
				if errors.Is(err, ErrFrameTooLarge) {
					t.cfg.Logger.Printf("data plane: message to %s not sent: %v", p.name, err)
					continue
				}
				t.cfg.Logger.Printf("data plane: connection to %s (%s) failed: %v", p.name, conn.RemoteAddr(), err)
				t.untrack(conn)
				conn = nil
				continue
			}
			t.sent.Add(1)
		}
		if conn != nil && p.empty() {
			if err := fw.Flush(); err != nil {
				t.cfg.Logger.Printf("data plane: connection to %s (%s) failed: %v", p.name, conn.RemoteAddr(), err)
				t.untrack(conn)
				conn = nil
			}
		}
	}
}

// waitUnstalled holds the writer of host's queue while the fault layer
// stalls it (what was already written is flushed first); it reports false
// when the transport stops.
func (t *Transport) waitUnstalled(host string, conn net.Conn, fw *frameWriter) bool {
	flushed := false
	for {
		on, changed := t.faults.stalled(host)
		if !on {
			return true
		}
		if conn != nil && !flushed {
			_ = fw.Flush() // a failure shows up on the next write
			flushed = true
		}
		select {
		case <-changed:
		case <-t.stop:
			return false
		}
	}
}

// dial connects to host, answers the challenge and sends the hello.
func (t *Transport) dial(host string) (net.Conn, *frameWriter, error) {
	addr := t.cfg.Resolve(host)
	if addr == "" {
		return nil, nil, fmt.Errorf("no data address known for %s yet", host)
	}
	// A loopback peer is dialled from this host's own loopback address
	// (netlimit.LoopbackFor), so the per-address handshake limit tells
	// the hosts of a loopback cluster apart from a local flood.
	c, err := netlimit.DialContext(context.Background(), t.cfg.Host, "tcp", addr, t.cfg.DialTimeout)
	if err != nil {
		return nil, nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	nonce, err := readChallenge(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("%s (%s): %w", host, addr, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	fw := newFrameWriter(&countingWriter{w: c, n: &t.sentBytes}, sessionMAC(t.cfg.Keys, nonce))
	if err := fw.writeHello(t.cfg.Host, host); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, fw, nil
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (t *Transport) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			select {
			case <-t.stop:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			t.cfg.Logger.Printf("data plane: accept: %v", err)
			if !t.sleep(50 * time.Millisecond) {
				return
			}
			continue
		}
		addr := t.limitedAddr(c)
		if !t.takeHandshake(addr) {
			// Too many connections are still in their handshake, from
			// everywhere or from this address: refuse this one without
			// reading from it (a flood of strangers costs a bounded
			// number of goroutines and no buffers).
			t.rejected.Add(1) // counted before the peer can see the close
			t.overflow.Add(1)
			c.Close()
			continue
		}
		if !t.track(c) {
			t.releaseHandshake(addr)
			return
		}
		t.wg.Add(1)
		go t.serve(c)
	}
}

// serve reads one inbound connection until it fails; any bad frame closes
// this connection only.
func (t *Transport) serve(c net.Conn) {
	defer t.wg.Done()
	defer t.untrack(c)
	remote := c.RemoteAddr().String()
	fr, from, err := t.handshake(c)
	if err != nil {
		if err != errNoChallenge {
			t.reject(remote, from, err)
		}
		return
	}
	for {
		m := new(ha.Message)
		if err := fr.ReadMessage(m); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				t.reject(remote, from, err)
			}
			return
		}
		if m.From != from {
			t.reject(remote, from, fmt.Errorf("message claims to come from %q", m.From))
			return
		}
		if t.faults.blocked(from) {
			t.faultDropped.Add(1)
			continue
		}
		t.recv.Add(1)
		t.cfg.Deliver(from, m)
	}
}

var errNoChallenge = errors.New("challenge not written")

// limitedAddr is the source address of c that MaxHandshakesPerAddr
// counts (every address, loopback included).
func (t *Transport) limitedAddr(c net.Conn) string { return netlimit.SourceAddr(c) }

// takeHandshake takes a handshake slot, one of MaxHandshakes and, unless
// addr is "", one of addr's MaxHandshakesPerAddr; false when none is free.
func (t *Transport) takeHandshake(addr string) bool {
	select {
	case t.handshakes <- struct{}{}:
	default:
		return false
	}
	if addr == "" {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perAddr[addr] >= t.cfg.MaxHandshakesPerAddr {
		<-t.handshakes
		return false
	}
	t.perAddr[addr]++
	return true
}

// releaseHandshake returns the slots takeHandshake took.
func (t *Transport) releaseHandshake(addr string) {
	<-t.handshakes
	if addr == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perAddr[addr]--; t.perAddr[addr] <= 0 {
		delete(t.perAddr, addr)
	}
}

// handshake sends the challenge and reads the hello of an accepted
// connection, within HandshakeTimeout and holding one of the
// MaxHandshakes tokens; it returns the connection's reader and the peer.
func (t *Transport) handshake(c net.Conn) (*frameReader, string, error) {
	defer t.releaseHandshake(t.limitedAddr(c))
	challenge, nonce := newChallenge()
	_ = c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if _, err := c.Write(challenge); err != nil {
		return nil, "", errNoChallenge
	}
	fr := newFrameReader(c, sessionMAC(t.cfg.Keys, nonce), t.cfg.MaxFrame)
	from, err := fr.readHello(t.cfg.Host)
	if err != nil {
		return nil, "", err
	}
	if from == t.cfg.Host || (t.cfg.Peer != nil && !t.cfg.Peer(from)) {
		return nil, from, fmt.Errorf("%w: host %q is not a peer of this node in the topology", ErrHandshake, from)
	}
	_ = c.SetDeadline(time.Time{})
	return fr, from, nil
}

func (t *Transport) reject(remote, host string, err error) {
	select {
	case <-t.stop:
		return
	default:
	}
	t.rejected.Add(1)
	who := remote
	if host != "" {
		who = fmt.Sprintf("%s (host %s)", remote, host)
	}
	t.noise.Printf("data plane: closing connection from %s: %v", who, err)
}

// Close stops every goroutine and closes every connection. Queued
// messages are discarded.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.stop)
	err := t.ln.Close()
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}
