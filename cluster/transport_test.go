package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type delivery struct {
	from string
	m    *ha.Message
}

// newTestTransport starts a transport whose deliveries go to a channel.
func newTestTransport(t *testing.T, host string, k Keys, peers map[string]string) (*Transport, chan delivery, *syncBuffer) {
	t.Helper()
	ch := make(chan delivery, 64)
	var logs syncBuffer
	var mu sync.Mutex
	tr, err := NewTransport(TransportConfig{
		Host: host, Keys: k, Listen: "127.0.0.1:0", Logger: log.New(&logs, "", 0),
		Deliver: func(from string, m *ha.Message) { ch <- delivery{from, m} },
		Resolve: func(h string) string {
			mu.Lock()
			defer mu.Unlock()
			return peers[h]
		},
		RetryInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr, ch, &logs
}

func recv(t *testing.T, ch chan delivery) delivery {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no message delivered")
	}
	return delivery{}
}

func dataMsg(from string, seq uint64) *ha.Message {
	return &ha.Message{Kind: ha.KindData, From: from, Frag: 0, Tuples: []ha.Tuple{{Seq: seq, Key: 1, Value: float64(seq)}}}
}

func TestTransportDeliversInOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys Keys
	}{{"open", Keys{}}, {"authenticated", keysFor("transport secret")}} {
		t.Run(tc.name, func(t *testing.T) {
			peers := map[string]string{}
			b, ch, _ := newTestTransport(t, "B", tc.keys, peers)
			peers["B"] = b.Addr()
			a, _, _ := newTestTransport(t, "A", tc.keys, peers)
			for i := uint64(1); i <= 200; i++ {
				m := dataMsg("A", i)
				m.Epoch = 2
				a.Send("B", m)
			}
			for i := uint64(1); i <= 200; i++ {
				d := recv(t, ch)
				assert.Equal(t, "A", d.from)
				require.Equal(t, i, d.m.Tuples[0].Seq, "FIFO per link")
				assert.Equal(t, uint64(2), d.m.Epoch, "epochs travel")
			}
			assert.Equal(t, int64(200), a.Stats().SentMessages)
		})
	}
}

// rawConn dials tr, reads its challenge and returns the connection and nonce.
func rawConn(t *testing.T, tr *Transport) (net.Conn, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", tr.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	nonce, err := readChallenge(c)
	require.NoError(t, err)
	return c, nonce
}

// closedByPeer waits until the server closes c: an EOF, or a reset when
// the node closed with bytes of c still unread (it stops reading at the
// first bad header).
func closedByPeer(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, syscall.ECONNRESET) {
		return
	}
	require.NoError(t, err, "the node must close the connection (EOF), not time out")
}

func TestTransportClosesBadConnectionsAndKeepsServing(t *testing.T) {
	k := keysFor("the real secret")
	peers := map[string]string{}
	b, ch, logs := newTestTransport(t, "B", k, peers)
	peers["B"] = b.Addr()

	for _, tc := range []struct {
		name  string
		write func(c net.Conn, nonce []byte)
	}{
		{"garbage", func(c net.Conn, _ []byte) { c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) }},
		{"oversized frame", func(c net.Conn, _ []byte) {
			h := make([]byte, headerLen)
			binary.BigEndian.PutUint32(h, MaxFrame+1)
			h[4] = flagMAC
			h[5] = byte(ha.KindStrategy)
			c.Write(h)
		}},
		{"no secret", func(c net.Conn, nonce []byte) {
			fw := newFrameWriter(c, sessionMAC(Keys{}, nonce))
			fw.writeHello("A", "B")
			fw.WriteMessage(dataMsg("A", 1))
			fw.Flush()
		}},
		{"wrong secret", func(c net.Conn, nonce []byte) {
			fw := newFrameWriter(c, sessionMAC(keysFor("a guessed secret"), nonce))
			fw.writeHello("A", "B")
			fw.WriteMessage(dataMsg("A", 1))
			fw.Flush()
		}},
		{"bad HMAC after a good hello", func(c net.Conn, nonce []byte) {
			var buf bytes.Buffer
			fw := newFrameWriter(&buf, sessionMAC(k, nonce))
			fw.writeHello("A", "B")
			fw.WriteMessage(dataMsg("A", 1))
			fw.Flush()
			raw := buf.Bytes()
			raw[len(raw)-1] ^= 1
			c.Write(raw)
		}},
		{"spoofed sender", func(c net.Conn, nonce []byte) {
			fw := newFrameWriter(c, sessionMAC(k, nonce))
			fw.writeHello("A", "B")
			fw.WriteMessage(dataMsg("C", 1))
			fw.Flush()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := b.Stats().Rejected
			c, nonce := rawConn(t, b)
			tc.write(c, nonce)
			closedByPeer(t, c)
			assert.Equal(t, before+1, b.Stats().Rejected)
			select {
			case d := <-ch:
				t.Fatalf("a bad connection delivered %+v", d.m)
			default:
			}
		})
	}
	assert.Contains(t, logs.String(), "closing connection from 127.0.0.1:", "errors name the peer address")

	// The node still serves a well-behaved peer.
	a, _, _ := newTestTransport(t, "A", k, peers)
	a.Send("B", dataMsg("A", 42))
	d := recv(t, ch)
	assert.Equal(t, uint64(42), d.m.Tuples[0].Seq)
}

func TestTransportFaultLayer(t *testing.T) {
	peers := map[string]string{}
	b, ch, _ := newTestTransport(t, "B", Keys{}, peers)
	peers["B"] = b.Addr()
	a, _, _ := newTestTransport(t, "A", Keys{}, peers)

	a.SetFaults(FaultRules{Block: []string{"B"}})
	a.Send("B", dataMsg("A", 1))
	a.SetFaults(FaultRules{Loss: []LinkLoss{{To: "B", P: 1}}})
	a.Send("B", dataMsg("A", 2))
	assert.Equal(t, int64(2), a.Stats().FaultDropped)

	a.SetFaults(FaultRules{Delay: []LinkDelay{{To: "B", Extra: 150 * time.Millisecond}}})
	t0 := time.Now()
	a.Send("B", dataMsg("A", 3))
	a.SetFaults(FaultRules{})
	a.Send("B", dataMsg("A", 4))
	d := recv(t, ch)
	assert.Equal(t, uint64(3), d.m.Tuples[0].Seq, "blocked and lost messages never arrive")
	assert.GreaterOrEqual(t, time.Since(t0), 150*time.Millisecond)
	assert.Equal(t, uint64(4), recv(t, ch).m.Tuples[0].Seq, "a delayed message holds back later ones (FIFO)")

	// Inbound filtering: B blocks A, so A's messages are dropped on arrival.
	b.SetFaults(FaultRules{Block: []string{"A"}})
	a.Send("B", dataMsg("A", 5))
	require.Eventually(t, func() bool { return b.Stats().FaultDropped == 1 }, 5*time.Second, time.Millisecond)
	b.SetFaults(FaultRules{})
	a.Send("B", dataMsg("A", 6))
	assert.Equal(t, uint64(6), recv(t, ch).m.Tuples[0].Seq)

	assert.Error(t, FaultRules{Loss: []LinkLoss{{P: 1.5}}}.Validate())
	assert.Error(t, FaultRules{Delay: []LinkDelay{{Extra: -time.Second}}}.Validate())
}

func TestTransportQueueBoundDropsInsteadOfBlocking(t *testing.T) {
	// No address is ever known for C: messages wait, then the bound drops them.
	tr, err := NewTransport(TransportConfig{
		Host: "A", Listen: "127.0.0.1:0", MaxQueue: 10,
		Deliver: func(string, *ha.Message) {}, Resolve: func(string) string { return "" },
		RetryInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	defer tr.Close()
	for i := range 25 {
		tr.Send("C", dataMsg("A", uint64(i)))
	}
	// At most MaxQueue messages wait in the queue, plus the batch the
	// writer took before its dial failed (itself at most MaxQueue): the
	// rest is dropped, and nothing is both.
	s := tr.Stats()
	assert.GreaterOrEqual(t, s.Dropped, int64(25-2*10))
	assert.LessOrEqual(t, s.Dropped, int64(25-10))
	assert.Equal(t, int64(25), s.Dropped+s.QueuedPending, "every message is either waiting or dropped")
}

func TestTransportStallHoldsMessagesUntilHealed(t *testing.T) {
	peers := map[string]string{}
	b, ch, _ := newTestTransport(t, "B", Keys{}, peers)
	peers["B"] = b.Addr()
	a, _, _ := newTestTransport(t, "A", Keys{}, peers)
	a.Send("B", dataMsg("A", 1))
	assert.Equal(t, uint64(1), recv(t, ch).m.Tuples[0].Seq)

	a.SetFaults(FaultRules{Stall: []string{"B"}})
	for i := uint64(2); i <= 50; i++ {
		a.Send("B", dataMsg("A", i))
	}
	select {
	case d := <-ch:
		t.Fatalf("a stalled link delivered %d", d.m.Tuples[0].Seq)
	case <-time.After(100 * time.Millisecond):
	}
	assert.Equal(t, int64(49), a.Stats().QueuedPending, "held, not dropped")
	a.SetFaults(FaultRules{})
	for i := uint64(2); i <= 50; i++ {
		require.Equal(t, i, recv(t, ch).m.Tuples[0].Seq, "everything arrives after the heal, in order")
	}
	s := a.Stats()
	assert.Zero(t, s.Dropped+s.FaultDropped)
}

func TestEnvSplitsLargeDataMessages(t *testing.T) {
	peers := map[string]string{}
	b, ch, _ := newTestTransport(t, "B", Keys{}, peers)
	peers["B"] = b.Addr()
	a, _, _ := newTestTransport(t, "A", Keys{}, peers)
	env := &clusterEnv{r: &runner{tr: a}}
	const n = 2*maxSendTuples + 100
	m := &ha.Message{Kind: ha.KindData, From: "A", Epoch: 5}
	for i := range n {
		m.Tuples = append(m.Tuples, ha.Tuple{Seq: uint64(i + 1)})
	}
	env.Send("B", m)
	var got []uint64
	for len(got) < n {
		d := recv(t, ch)
		assert.LessOrEqual(t, len(d.m.Tuples), maxSendTuples)
		assert.Equal(t, uint64(5), d.m.Epoch, "every part keeps the header")
		for _, tu := range d.m.Tuples {
			got = append(got, tu.Seq)
		}
	}
	for i, s := range got {
		require.Equal(t, uint64(i+1), s, "parts arrive in order")
	}
	assert.Equal(t, int64(n), env.tuplesOut.Load())
}

// TestPeerQueueReusesWrittenBatches: the writer hands its written batch
// back when it takes the next one, so a peer's queue keeps two arrays and
// queueing a message allocates nothing; the batch handed back holds no
// message any more (they may be large, and are garbage once written).
func TestPeerQueueReusesWrittenBatches(t *testing.T) {
	p := &peer{name: "B", notify: make(chan struct{}, 1)}
	stop := make(chan struct{})
	m := &ha.Message{Kind: ha.KindData}
	send := func(k int) {
		p.mu.Lock()
		for range k {
			p.q = append(p.q, queued{m: m})
		}
		p.mu.Unlock()
	}
	var batch []queued
	for range 3 { // both arrays reach their size
		send(8)
		batch = p.take(stop, batch)
	}
	written := batch
	send(8)
	batch = p.take(stop, batch)
	require.Len(t, batch, 8)
	assert.Same(t, &written[:1][0], &p.q[:1][0], "the written batch is the queue's array again")
	assert.Nil(t, written[:8][0].m, "and holds no message")
	allocs := testing.AllocsPerRun(100, func() {
		send(8)
		batch = p.take(stop, batch)
	})
	assert.Zero(t, allocs, "queueing and taking allocate nothing")

	big := make([]queued, maxSpareQueue+1)
	send(1)
	batch = p.take(stop, big)
	assert.Nil(t, p.q, "a backlog's array is not kept")
}
