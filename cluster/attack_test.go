package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/internal/netlimit"
)

// countingListener counts the bytes read from its connections.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// startControl serves a node's control handler (with key k) as a node
// does: its server, its timeouts and its connection caps. It returns the
// address and the bytes read so far.
func startControl(t *testing.T, k Keys) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var n atomic.Int64
	r := &runner{log: log.New(io.Discard, "", 0), met: &nodeMetrics{reg: prometheus.NewRegistry()}}
	srv := newControlServer(r.handlerAt(k, time.Now))
	go func() {
		_ = srv.Serve(netlimit.Limit(countingListener{ln, &n}, controlMaxConns, controlMaxConnsPerAddr))
	}()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), &n
}

// forgedControlHeader is a POST /fault with a well-formed tag of the
// wrong key at the current time, announcing a body of bodyLen bytes.
func forgedControlHeader(bodyLen int) string {
	mac := strings.Repeat("ab", 32)
	return fmt.Sprintf("POST /fault HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"Authorization: %s ts=%d nonce=%s body=%s mac=%s\r\n\r\n", bodyLen, controlScheme, time.Now().UnixNano(), strings.Repeat("0f", 16), mac, mac)
}

// TestControlRefusesBeforeReadingTheBody: a request with a wrong tag and
// a 1 MiB body is answered 401 and closed after its header, whether or
// not the body is sent; each makes the node read a few hundred bytes.
func TestControlRefusesBeforeReadingTheBody(t *testing.T) {
	addr, read := startControl(t, keysFor("control secret"))
	const conns, body = 4, 1 << 20
	var wg sync.WaitGroup
	for range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
		_, err = io.WriteString(c, forgedControlHeader(body))
		require.NoError(t, err)
		resp, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err, "answered after the header alone")
		assert.Contains(t, resp, "401")
		wg.Add(1)
		go func() { // then the body; the node has stopped reading
			defer wg.Done()
			_, _ = c.Write(make([]byte, body))
		}()
		closedByPeer(t, c)
	}
	wg.Wait()
	assert.Less(t, read.Load(), int64(conns*32<<10), "bytes the node read from %d forged requests of 1 MiB", conns)
	t.Logf("control: %d forged 1 MiB requests, %d bytes read by the node", conns, read.Load())
}

// TestControlCapsConnections: one address holds at most
// controlMaxConnsPerAddr connections (loopback included); one more is
// closed unread at once, and an idle connection is closed within the
// header timeout.
func TestControlCapsConnections(t *testing.T) {
	addr, _ := startControl(t, keysFor("control secret"))
	var held []net.Conn
	for range controlMaxConnsPerAddr {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer extra.Close()
	require.NoError(t, extra.SetDeadline(time.Now().Add(20*time.Second)))
	closedByPeer(t, extra)
	// The held connections send nothing: each is closed by the header timeout.
	for _, c := range held {
		require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
		closedByPeer(t, c)
	}
}

// TestGossipStreamsAreBounded: one address holds at most
// gossipMaxStreamsPerAddr of the gossip port's streams (a further one is
// closed at once), and a stream yields memberlist at most
// gossipStreamBytes.
func TestGossipStreamsAreBounded(t *testing.T) {
	d, _ := newTestDetector(t, "A", keysFor("gossip secret"))
	defer d.Shutdown(false)
	var held []net.Conn
	for range gossipMaxStreamsPerAddr {
		c, err := net.Dial("tcp", d.Addr())
		require.NoError(t, err)
		defer c.Close()
		held = append(held, c)
	}
	// The held streams are admitted before the next one is dialled.
	require.Eventually(t, func() bool {
		return d.gt.limit.Open() == gossipMaxStreamsPerAddr
	}, 10*time.Second, 5*time.Millisecond)
	extra, err := net.Dial("tcp", d.Addr())
	require.NoError(t, err)
	defer extra.Close()
	require.NoError(t, extra.SetDeadline(time.Now().Add(20*time.Second)))
	closedByPeer(t, extra)
	assert.Equal(t, int64(1), d.gt.limit.Refused())

	// The byte bound, on a stream of its own.
	a, b := net.Pipe()
	defer a.Close()
	sl := newStreamLimit()
	s := admitStream(sl, pipeConn{b})
	require.NotNil(t, s)
	go func() { _, _ = a.Write(make([]byte, 4*gossipStreamBytes)) }()
	n, err := io.Copy(io.Discard, s)
	assert.ErrorIs(t, err, errGossipStreamTooLong)
	assert.Equal(t, int64(gossipStreamBytes), n)
	require.NoError(t, s.Close())
	assert.Zero(t, sl.Open(), "closing a stream releases its slot")
}

// pipeConn is a net.Pipe end with a TCP-like remote address.
type pipeConn struct{ net.Conn }

func (pipeConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// TestLoopbackFloodDoesNotDelayPeers: a local process holding every
// handshake slot of 127.0.0.1 does not delay a peer of the cluster, which
// dials from its own loopback address.
func TestLoopbackFloodDoesNotDelayPeers(t *testing.T) {
	k := keysFor("flood secret")
	ch := make(chan delivery, 4)
	b, err := NewTransport(TransportConfig{
		Host: "B", Keys: k, Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0),
		Deliver: func(from string, m *ha.Message) { ch <- delivery{from, m} },
		Resolve: func(string) string { return "" }, MaxHandshakesPerAddr: 2,
	})
	require.NoError(t, err)
	defer b.Close()
	for range 2 {
		rawConn(t, b) // holds one of 127.0.0.1's slots for the handshake timeout
	}
	c, err := net.Dial("tcp", b.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	closedByPeer(t, c) // 127.0.0.1 is not exempt: its third connection is refused
	a, _, _ := newTestTransport(t, "A", k, map[string]string{"B": b.Addr()})
	a.Send("B", &ha.Message{Kind: ha.KindAck, From: "A"})
	select {
	case d := <-ch:
		assert.Equal(t, "A", d.from)
	case <-time.After(1500 * time.Millisecond):
		// Before the flood's slots expire (2 s): the peer was not queued behind them.
		if !canBindLoopback(t) {
			t.Skip("this machine cannot dial from loopback addresses other than 127.0.0.1")
		}
		t.Fatal("the peer's message waited for the flood's handshake slots")
	}
}

// canBindLoopback reports whether this machine can dial from 127.x.y.z.
func canBindLoopback(t *testing.T) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: netlimit.LoopbackFor("probe")}}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// TestNoiseLogIsRateLimited: a flood of refused traffic writes at most
// noiseBurst lines a second plus one line counting the rest.
func TestNoiseLogIsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	nl := &noiseLog{l: log.New(&buf, "", 0)}
	t0 := time.Unix(1000, 0)
	n := 0
	for i := range 10000 {
		if nl.allow(t0.Add(time.Duration(i) * 100 * time.Microsecond)) { // one second in all
			n++
		}
	}
	assert.Equal(t, noiseBurst, n)
	nl.allow(t0.Add(2 * time.Second))
	assert.Contains(t, buf.String(), fmt.Sprintf("%d similar lines left out", 10000-noiseBurst))
}

// TestStrangerPacketsAreRateLimited: UDP packets from addresses that are
// no member's reach memberlist at gossipStrangerPackets a second at most;
// a member's always do.
func TestStrangerPacketsAreRateLimited(t *testing.T) {
	var b packetBudget
	t0 := time.Unix(1000, 0)
	passed := 0
	for i := range 10000 { // 10 000 packets in one second
		if b.allow(t0.Add(time.Duration(i) * 100 * time.Microsecond)) {
			passed++
		}
	}
	assert.LessOrEqual(t, passed, 2*gossipStrangerPackets, "the burst plus one second's rate")
	assert.Equal(t, int64(10000-passed), b.dropped.Load())
	f := newFaultLayer()
	f.learnAddr("127.0.0.1:7946", "A")
	assert.True(t, f.knownAddr("127.0.0.1:7946"))
	assert.False(t, f.knownAddr("127.0.0.1:7947"))
}
