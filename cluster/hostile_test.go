package cluster

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// TestUnauthenticatedFloodStaysSmall is the memory-exhaustion case of
// issue 26: 200 connections to a node with a secret, each announcing the
// largest frame the old reader accepted (16 MiB) or sending a full-size
// hello with a wrong tag, must not make the node allocate what they
// announce. The old reader allocated each announced payload before its
// MAC was checked: 40 such connections cost 550 MB.
func TestUnauthenticatedFloodStaysSmall(t *testing.T) {
	const conns = 200
	k := keysFor("flood secret")
	b, ch, _ := newTestTransport(t, "B", k, map[string]string{})

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	chunk := make([]byte, 64<<10)
	var forged bytes.Buffer
	fw := newFrameWriter(&forged, sessionMAC(keysFor("a guess"), bytes.Repeat([]byte{1}, nonceLen)))
	require.NoError(t, fw.writeHello("A", "B"))
	require.NoError(t, fw.Flush())

	var wg sync.WaitGroup
	open := make([]net.Conn, 0, conns)
	for i := range conns {
		c, err := net.Dial("tcp", b.Addr())
		require.NoError(t, err)
		open = append(open, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A safety net against a hang of this test, not a bound it checks.
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := readChallenge(c); err != nil {
				return // refused: too many handshakes pending
			}
			if i%2 == 1 {
				_, _ = c.Write(forged.Bytes())
				return
			}
			h := make([]byte, headerLen)
			binary.BigEndian.PutUint32(h, MaxFrame)
			h[4] = flagMAC
			if _, err := c.Write(h); err != nil {
				return
			}
			for range MaxFrame / len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for _, c := range open {
		c.Close()
	}

	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d hostile connections: %d KiB allocated, heap in use %d → %d KiB, %d rejected (%d unread)",
		conns, allocated>>10, before.HeapInuse>>10, after.HeapInuse>>10, b.Stats().Rejected, b.Stats().Overflowed)
	assert.Less(t, allocated, uint64(100<<20), "bytes allocated while under attack")
	assert.Less(t, after.HeapInuse, uint64(100<<20), "heap in use while under attack")
	select {
	case d := <-ch:
		t.Fatalf("an unauthenticated connection delivered %+v", d.m)
	default:
	}
}

// TestHandshakeSlotsAreBounded checks that connections beyond
// MaxHandshakes still in their hello are closed unread, and that a real
// peer gets through once the idle ones are gone.
func TestHandshakeSlotsAreBounded(t *testing.T) {
	const slots = 4
	k := keysFor("slot secret")
	ch := make(chan delivery, 8)
	tr, err := NewTransport(TransportConfig{
		Host: "B", Keys: k, Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0),
		Deliver:       func(from string, m *ha.Message) { ch <- delivery{from, m} },
		Resolve:       func(string) string { return "" },
		MaxHandshakes: slots,
	})
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	var idle []net.Conn
	for range slots {
		c, _ := rawConn(t, tr) // holds a slot: challenge read, no hello
		idle = append(idle, c)
	}
	c, err := net.Dial("tcp", tr.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = readChallenge(c)
	assert.ErrorIs(t, err, ErrHandshake, "the connection beyond the slots gets no challenge")
	assert.Equal(t, int64(1), tr.Stats().Overflowed)
	for _, c := range idle {
		c.Close()
	}
	a, _, _ := newTestTransport(t, "A", k, map[string]string{"B": tr.Addr()})
	a.Send("B", dataMsg("A", 7))
	assert.Equal(t, uint64(7), recv(t, ch).m.Tuples[0].Seq)
}

// TestStrangerHelloRefused checks the topology filter: a hello correctly
// authenticated with the cluster secret but naming a host outside the
// topology, or the node itself, is refused and delivers nothing.
func TestStrangerHelloRefused(t *testing.T) {
	k := keysFor("topology secret")
	ch := make(chan delivery, 8)
	b, err := NewTransport(TransportConfig{
		Host: "B", Keys: k, Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0),
		Deliver: func(from string, m *ha.Message) { ch <- delivery{from, m} },
		Resolve: func(string) string { return "" },
		Peer:    func(h string) bool { return h == "A" || h == "B" },
	})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	for _, from := range []string{"X", "B"} {
		t.Run(from, func(t *testing.T) {
			before := b.Stats().Rejected
			c, nonce := rawConn(t, b)
			fw := newFrameWriter(c, sessionMAC(k, nonce))
			require.NoError(t, fw.writeHello(from, "B"))
			require.NoError(t, fw.WriteMessage(&ha.Message{Kind: ha.KindRoute, From: from, Frag: 1, Epoch: 1 << 62,
				Route: &ha.Route{Frag: 1, Epoch: 1 << 62, Primary: from}}))
			require.NoError(t, fw.Flush())
			closedByPeer(t, c)
			assert.Equal(t, before+1, b.Stats().Rejected)
		})
	}
	a, _, _ := newTestTransport(t, "A", k, map[string]string{"B": b.Addr()})
	a.Send("B", dataMsg("A", 3))
	d := recv(t, ch)
	assert.Equal(t, "A", d.from, "only the topology's host got through")
}

// TestControlTokensArePerRequest is the control-endpoint case of issue 26:
// a token seen on the wire must be useless for another request, another
// body, later, or the same request again; /healthz says only "ok".
func TestControlTokensArePerRequest(t *testing.T) {
	k := keysFor("control secret")
	now := time.Unix(1_000_000, 0)
	r := &runner{log: log.New(io.Discard, "", 0), met: &nodeMetrics{reg: prometheus.NewRegistry()}}
	h := r.handlerAt(k, func() time.Time { return now })
	body := []byte(`{"at": 5}`)
	// POST /start on a node given --start: 409 once authenticated, 401 before.
	req := func(method, path string, b []byte) *http.Request {
		return httptest.NewRequest(method, path, bytes.NewReader(b))
	}
	signed := func(method, path string, b []byte, at time.Time) *http.Request {
		q := req(method, path, b)
		signRequest(q, k, b, at)
		return q
	}
	serve := func(q *http.Request) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, q)
		return w.Code
	}
	replayed := signed(http.MethodPost, "/start", body, now)
	first := replayed.Header.Get("Authorization")
	require.Equal(t, http.StatusConflict, serve(replayed), "a fresh signed request is authenticated")

	swapped := func(mut func(q *http.Request)) *http.Request {
		q := req(http.MethodPost, "/start", body)
		q.Header.Set("Authorization", first)
		mut(q)
		return q
	}
	for _, tc := range []struct {
		name string
		q    *http.Request
	}{
		{"no token", req(http.MethodPost, "/start", body)},
		{"the old fixed bearer token", func() *http.Request {
			q := req(http.MethodPost, "/start", body)
			q.Header.Set("Authorization", fmt.Sprintf("Bearer %x", k.Control))
			return q
		}()},
		{"the same request again", swapped(func(*http.Request) {})},
		{"the token on another path", func() *http.Request {
			q := req(http.MethodPost, "/stop", body)
			q.Header.Set("Authorization", first)
			return q
		}()},
		{"the token with another body", func() *http.Request {
			q := req(http.MethodPost, "/start", []byte(`{"at": 6}`))
			q.Header.Set("Authorization", first)
			return q
		}()},
		{"older than the window", signed(http.MethodPost, "/start", body, now.Add(-ControlWindow-time.Second))},
		{"ahead of the window", signed(http.MethodPost, "/start", body, now.Add(ControlWindow+time.Second))},
		{"signed with another secret", func() *http.Request {
			q := req(http.MethodPost, "/start", body)
			signRequest(q, keysFor("another secret"), body, now)
			return q
		}()},
		{"malformed header", func() *http.Request {
			q := req(http.MethodPost, "/start", body)
			q.Header.Set("Authorization", "StreamHA-HMAC ts=x nonce=y mac=z")
			return q
		}()},
		{"profiler without a token", req(http.MethodGet, "/debug/pprof/cmdline", nil)},
		{"members without a token", req(http.MethodGet, "/members", nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, http.StatusUnauthorized, serve(tc.q))
		})
	}
	assert.Equal(t, http.StatusConflict, serve(signed(http.MethodPost, "/start", body, now.Add(ControlWindow-time.Second))),
		"a request inside the window with a new nonce passes")

	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "ok\n", w.Body.String(), "/healthz reveals nothing but liveness")
}

// TestHandshakeSlotsPerAddress checks that one source address holds at
// most MaxHandshakesPerAddr of the handshake slots: a further connection
// from it is closed unread while another address still gets a challenge.
func TestHandshakeSlotsPerAddress(t *testing.T) {
	tr, err := NewTransport(TransportConfig{
		Host: "B", Keys: keysFor("per-address secret"), Listen: "127.0.0.1:0", Logger: log.New(io.Discard, "", 0),
		Deliver:       func(string, *ha.Message) {},
		Resolve:       func(string) string { return "" },
		MaxHandshakes: 16, MaxHandshakesPerAddr: 2,
	})
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	for range 2 {
		rawConn(t, tr) // holds one of 127.0.0.1's slots: challenge read, no hello
	}
	dialFrom := func(local string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", tr.Addr())
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = readChallenge(c)
		return c, err
	}
	_, err = dialFrom("127.0.0.1")
	assert.ErrorIs(t, err, ErrHandshake, "a third connection from 127.0.0.1 gets no challenge")
	assert.Equal(t, int64(1), tr.Stats().Overflowed)
	if _, err := dialFrom("127.0.0.2"); err != nil {
		require.NotErrorIs(t, err, ErrHandshake, "another address still gets a challenge")
		t.Skipf("this machine cannot dial from 127.0.0.2: %v", err)
	}
}
