package cluster

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamha/streamha/internal/netlimit"
)

// Bounds of the gossip port's TCP streams. memberlist reads a whole
// encrypted stream (up to 20 MB) before it can decrypt and refuse it; the
// wrapper below lets a stream yield at most gossipStreamBytes (a
// push-pull of this cluster's state is a few kB: about 100 bytes a host)
// and keeps at most gossipMaxStreams open at once, gossipMaxStreamsPerAddr
// from one source address, each for at most gossipStreamTimeout. A stream
// beyond a cap is closed before memberlist reads from it.
const (
	gossipStreamBytes       = 256 << 10
	gossipMaxStreams        = 32
	gossipMaxStreamsPerAddr = 4
	gossipStreamTimeout     = 5 * time.Second
)

// gossipStrangerPackets is how many UDP packets a second the gossip port
// hands memberlist from addresses that are no member's (a joining host's
// first packets, or junk); packets from members always pass. memberlist
// decrypts every packet it is handed in one goroutine, and the probes
// and acks of the failure detector wait behind them: junk beyond this
// rate is dropped before it is decrypted.
const gossipStrangerPackets = 200

// errGossipStreamTooLong is the read error of a stream past its bound.
var errGossipStreamTooLong = errors.New("gossip stream above its byte bound")

// newStreamLimit admits memberlist's inbound streams within the caps.
func newStreamLimit() *netlimit.Caps {
	return netlimit.NewCaps(gossipMaxStreams, gossipMaxStreamsPerAddr)
}

// admitStream wraps c within the caps of limit, or closes it and returns
// nil.
func admitStream(limit *netlimit.Caps, c net.Conn) net.Conn {
	release, ok := limit.Admit(c)
	if !ok {
		return nil
	}
	by := time.Now().Add(gossipStreamTimeout)
	_ = c.SetDeadline(by)
	return &boundedStream{Conn: c, left: gossipStreamBytes, by: by, release: release}
}

// boundedStream is an inbound gossip stream that yields at most left
// bytes and whose deadline memberlist may shorten but not extend past
// gossipStreamTimeout from its accept.
type boundedStream struct {
	net.Conn
	left    int64
	by      time.Time // the accept-time deadline
	release func()
}

func (b *boundedStream) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w (%d bytes)", errGossipStreamTooLong, gossipStreamBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.Conn.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedStream) Close() error {
	err := b.Conn.Close()
	b.release()
	return err
}

// cap is t, or the accept-time deadline when t is later or zero.
func (b *boundedStream) cap(t time.Time) time.Time {
	if t.IsZero() || t.After(b.by) {
		return b.by
	}
	return t
}

// SetDeadline, SetReadDeadline and SetWriteDeadline may shorten the
// stream's life (memberlist sets its TCPTimeout) but not extend it past
// gossipStreamTimeout from its accept.
func (b *boundedStream) SetDeadline(t time.Time) error      { return b.Conn.SetDeadline(b.cap(t)) }
func (b *boundedStream) SetReadDeadline(t time.Time) error  { return b.Conn.SetReadDeadline(b.cap(t)) }
func (b *boundedStream) SetWriteDeadline(t time.Time) error { return b.Conn.SetWriteDeadline(b.cap(t)) }

// packetBudget is a token bucket of gossipStrangerPackets a second (burst
// as large), for packets from strangers.
type packetBudget struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped atomic.Int64
}

// allow takes a token at now, or counts a dropped packet.
func (b *packetBudget) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = gossipStrangerPackets
	} else {
		b.tokens = min(gossipStrangerPackets, b.tokens+now.Sub(b.last).Seconds()*gossipStrangerPackets)
	}
	b.last = now
	if b.tokens < 1 {
		b.dropped.Add(1)
		return false
	}
	b.tokens--
	return true
}
