package cluster

import (
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// floodYAML is a failure-free run: its verdict is precise unless the
// flood makes a host look dead or slows the data plane into a gap.
const floodYAML = `name: flood
duration: 4s
drain: 1s
source: {rate: 500, keys: 8, value: {dist: uniform, min: 0, max: 1}}
nodes:
  - {name: A, ops: [{map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
spares: 1
`

// flooder attacks one node's control and gossip ports until stopped, the
// way the attacks on an unbounded node held it at gigabytes: many
// concurrent connections each pushing a large announced body, rather
// than raw throughput (which would only measure who gets the machine's
// two cores). Control: forged requests (a well-formed wrong tag, 1 MiB
// announced) and idle connections; gossip: streams announcing 20 MB of
// encrypted state, idle streams, and UDP junk. Every attacker sends
// 64 KiB at a time and pauses between steps. peak samples the node's
// resident memory (VmHWM, kB) while it runs.
type flooder struct {
	stop                     chan struct{}
	wg                       sync.WaitGroup
	requests, streams, bytes atomic.Int64
	peak                     atomic.Int64
}

func startFlood(control, gossip string, pid int) *flooder {
	f := &flooder{stop: make(chan struct{})}
	chunk := make([]byte, 64<<10)
	// memberlist's encrypted-message type (10), then 20 MB announced: an
	// unbounded node buffers what follows until it has all of it.
	head := []byte{10, 1, 0x31, 0x2d, 0}
	pause := func(d time.Duration) bool {
		select {
		case <-f.stop:
			return false
		case <-time.After(d):
			return true
		}
	}
	attacker := func(addr string, first func(net.Conn) error, counter *atomic.Int64) {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					_ = c.SetDeadline(time.Now().Add(5 * time.Second))
					counter.Add(1)
					if first(c) == nil {
						for range 320 { // up to 20 MB, until the node closes it
							n, err := c.Write(chunk)
							f.bytes.Add(int64(n))
							if err != nil || !pause(25*time.Millisecond) {
								break
							}
						}
					}
					c.Close()
				}
				if !pause(50 * time.Millisecond) {
					return
				}
			}
		}()
	}
	for range 16 {
		attacker(control, func(c net.Conn) error {
			_, err := io.WriteString(c, forgedControlHeader(1<<20))
			return err
		}, &f.requests)
		attacker(gossip, func(c net.Conn) error {
			_, err := c.Write(head)
			return err
		}, &f.streams)
	}
	f.wg.Add(1)
	go func() { // idle connections, most of them beyond the caps
		defer f.wg.Done()
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for range 100 {
			for _, a := range []string{control, gossip} {
				if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
					held = append(held, c)
				}
			}
		}
		<-f.stop
	}()
	f.wg.Add(1)
	go func() { // UDP junk at the gossip port, 500 packets a second
		defer f.wg.Done()
		c, err := net.Dial("udp", gossip)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			for range 10 {
				_, _ = c.Write(chunk[:1400])
			}
			if !pause(20 * time.Millisecond) {
				return
			}
		}
	}()
	f.wg.Add(1)
	go func() { // the node's peak memory
		defer f.wg.Done()
		n := attackedNode{cmd: &exec.Cmd{Process: &os.Process{Pid: pid}}}
		for {
			if kb := n.status("VmHWM"); kb > f.peak.Load() {
				f.peak.Store(kb)
			}
			if !pause(50 * time.Millisecond) {
				return
			}
		}
	}()
	return f
}

func (f *flooder) halt() {
	close(f.stop)
	f.wg.Wait()
}

// TestFloodedNodeKeepsAPreciseRun floods the control and gossip ports of
// B during a failure-free run: the caps and bounds keep B alive in the
// membership and the verdict precise.
func TestFloodedNodeKeepsAPreciseRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for ~10 s")
	}
	var f *flooder
	var mu sync.Mutex
	found := make(chan struct{})
	cmp := launchTest(t, floodYAML, []string{"amnesia"}, "a flooded cluster's secret", func(c *LaunchConfig) {
		go func() {
			defer close(found)
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				b, err := os.ReadFile(ReadyFile(filepath.Join(c.Out, "amnesia"), "B"))
				var rd Ready
				if err == nil && json.Unmarshal(b, &rd) == nil && rd.Metrics != "" {
					mu.Lock()
					f = startFlood(rd.Metrics, rd.Gossip, rd.PID)
					mu.Unlock()
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	})
	<-found
	mu.Lock()
	defer mu.Unlock()
	require.NotNil(t, f, "B's ready file was never written")
	f.halt()
	t.Logf("flood: %d forged control requests, %d gossip streams, %d MB written; B's peak memory %d MB",
		f.requests.Load(), f.streams.Load(), f.bytes.Load()>>20, f.peak.Load()>>10)
	assert.Positive(t, f.requests.Load())
	assert.Positive(t, f.streams.Load())
	assert.Less(t, f.peak.Load(), int64(200<<10), "B's peak memory (kB) stays within tens of MB")
	rec := cmp.Result.Runs[0].Recovery
	assert.Equal(t, "precise", rec.Type, "a flooded failure-free run: %d missing, %d wrong, %d duplicates: %v", rec.Missing, rec.Wrong, rec.Duplicates, rec.Explanations)
	for _, ev := range cmp.Runs[0].Trace.Events() {
		assert.NotEqual(t, ha.EvTakeover, ev.Kind, "no host was declared dead: %+v", ev)
	}
}
