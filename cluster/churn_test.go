package cluster

import (
	"context"
	"encoding/json"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// openFDs counts this process's open file descriptors (sockets included).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestNodeSurvivesGarbageAndConnectionChurn runs a real node (the sink)
// in this process and attacks its data port on 127.0.0.1: connections
// that send random garbage, then a churn of thousands of connections
// opened and dropped. The node must accept every one of them, keep
// serving a legitimate peer, and its goroutines and file descriptors must
// return to where they were: nothing leaks per bad connection.
func TestNodeSurvivesGarbageAndConnectionChurn(t *testing.T) {
	const (
		secret  = "churn test secret"
		garbage = 300
		churn   = 3000
		// settle is the slack on the leak check: goroutines or sockets
		// the node and memberlist may still open after the baseline.
		// A leak per bad connection would show as thousands.
		settle = 10
	)
	yml := `name: churn
duration: 60s
drain: 1s
source: {rate: 10, keys: 2}
nodes:
  - {name: C, ops: [{map: {scale: 1}}]}
`
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yml), 0o644))
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- RunNode(ctx, NodeOptions{
			Config: cfg, Strategy: "none", Host: "sink", Out: dir, Secret: []byte(secret),
			MetricsAddr: "127.0.0.1:0", Linger: 10 * time.Millisecond, Logger: log.New(&logs, "", 0),
		})
	}()
	var rd Ready
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(ReadyFile(dir, "sink"))
		return err == nil && json.Unmarshal(b, &rd) == nil
	}, 5*time.Second, 5*time.Millisecond)
	g0, fd0 := runtime.NumGoroutine(), openFDs(t)

	// Garbage: random bytes of random length, sometimes after reading the challenge.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		c, err := net.Dial("tcp", rd.Data)
		require.NoError(t, err)
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		if i%2 == 0 {
			_, err = readChallenge(c)
			require.NoError(t, err)
		}
		b := make([]byte, 1+rng.IntN(4096))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		_, _ = c.Write(b)
		c.Close()
	}
	// Churn: open and drop connections as fast as possible; every one is accepted.
	for n := range churn {
		c, err := net.Dial("tcp", rd.Data)
		require.NoError(t, err, "connection %d refused: the node stopped accepting", n)
		if n%3 == 0 {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST instead of FIN
			}
		}
		c.Close()
	}

	// A legitimate peer still gets its tuple in.
	good, _, _ := newTestTransport(t, "C", keysFor(secret), map[string]string{"sink": rd.Data})
	good.Send("sink", &ha.Message{Kind: ha.KindData, From: "C", Frag: 0,
		Tuples: []ha.Tuple{{Seq: 1, Key: 1, Value: 9, ID: ha.OutputID{Kind: ha.IDSource, X: 1}}}})
	require.Eventually(t, func() bool {
		tr, err := ReadTraceTolerant(TraceFileOf(dir, "sink"))
		if err != nil {
			return false
		}
		for _, ev := range tr {
			if ev.Kind == ha.EvDeliver && ev.Tuple.Seq == 1 {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the node delivers a legitimate peer's tuple after the attack")
	require.NoError(t, good.Close())

	// Every bad connection's goroutine and socket is gone.
	assert.Eventually(t, func() bool {
		return runtime.NumGoroutine() <= g0+settle && openFDs(t) <= fd0+settle
	}, 10*time.Second, 20*time.Millisecond, "goroutines %d (baseline %d), fds %d (baseline %d)", runtime.NumGoroutine(), g0, openFDs(t), fd0)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("node did not stop")
	}
	assert.Contains(t, logs.String(), "closing connection from 127.0.0.1:", "bad connections are logged with the peer address")
}
