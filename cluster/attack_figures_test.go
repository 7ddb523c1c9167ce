package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackFigures measures the attacks on a node's ports: the node's
// peak resident memory (VmHWM) and how long the attack's connections stay
// open. It runs only with STREAMHA_ATTACK_FIGURES=1 (about a minute); with
// STREAMHA_ATTACK_BIN=path it attacks `path node` instead of this build
// (to compare with another version). docs/cluster.md quotes its output:
//
//	STREAMHA_ATTACK_FIGURES=1 go test ./cluster -run TestAttackFigures -v
func TestAttackFigures(t *testing.T) {
	if os.Getenv("STREAMHA_ATTACK_FIGURES") != "1" {
		t.Skip("set STREAMHA_ATTACK_FIGURES=1 to measure the attacks (about a minute)")
	}
	chunk := make([]byte, 1<<20)
	for _, a := range []struct {
		name   string
		attack func(n attackedNode) (conns int, openAfter func() int)
	}{
		{"control: 1000 forged requests with 1 MiB bodies", func(n attackedNode) (int, func() int) {
			return holdConns(n.ready.Metrics, 1000, func(c net.Conn) {
				_, _ = io.WriteString(c, forgedControlHeader(len(chunk)))
				_, _ = c.Write(chunk)
			})
		}},
		{"control: 2000 idle keep-alive connections", func(n attackedNode) (int, func() int) {
			return holdConns(n.ready.Metrics, 2000, func(c net.Conn) {
				_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			})
		}},
		{"gossip: 150 streams announcing 20 MB", func(n attackedNode) (int, func() int) {
			return holdConns(n.ready.Gossip, 150, func(c net.Conn) {
				_, _ = c.Write([]byte{10, 1, 0x31, 0x2d, 0}) // memberlist's encrypted-message type, 20 MB announced
				for range 20 {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			})
		}},
		{"data plane: 200 idle connections from 127.0.0.1", func(n attackedNode) (int, func() int) {
			return holdConns(n.ready.Data, 200, func(net.Conn) {})
		}},
		{"gossip: 8 s of UDP junk (log lines)", func(n attackedNode) (int, func() int) {
			c, err := net.Dial("udp", n.ready.Gossip)
			require.NoError(t, err)
			defer c.Close()
			for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
				_, _ = c.Write(chunk[:1400])
				time.Sleep(50 * time.Microsecond)
			}
			return 0, func() int { return 0 }
		}},
	} {
		n := startAttackedNode(t)
		rss0 := n.status("VmRSS")
		t0 := time.Now()
		conns, open := a.attack(n)
		time.Sleep(time.Second)
		openAt1s := open()
		closedIn := time.Duration(0)
		for open() > 0 && time.Since(t0) < 40*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		closedIn = time.Since(t0)
		lines := n.stop()
		t.Logf("%-50s | rss before %4d MB | peak %5d MB | %4d of %4d connections open 1 s after | all closed after %5.1f s | %6d log lines",
			a.name, rss0>>10, n.peak>>10, openAt1s, conns, closedIn.Seconds(), lines)
	}
}

// holdConns opens n connections to addr at once, runs send on each and
// keeps them; open counts those the node has not closed yet.
func holdConns(addr string, n int, send func(net.Conn)) (int, func() int) {
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				return
			}
			_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			send(c)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}()
		if i%50 == 49 {
			time.Sleep(time.Millisecond)
		}
	}
	wg.Wait()
	closed := make([]bool, len(conns))
	return len(conns), func() int {
		open := 0
		buf := make([]byte, 64<<10)
		for i, c := range conns {
			if closed[i] {
				continue
			}
			_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
			if _, err := c.Read(buf); err == nil {
				open++ // the node wrote (a challenge, a response): open until EOF
				continue
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
				open++
				continue
			}
			closed[i] = true
			c.Close()
		}
		return open
	}
}

type attackedNode struct {
	t     *testing.T
	cmd   *exec.Cmd
	ready Ready
	log   *bytes.Buffer
	peak  int64 // kB, set by stop
}

// startAttackedNode runs a sink node with a secret as its own process.
func startAttackedNode(t *testing.T) attackedNode {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("name: attacked\nduration: 300s\ndrain: 1s\nsource: {rate: 100, keys: 2}\nnodes:\n  - {name: C, ops: [{map: {scale: 1}}]}\n"), 0o644))
	args := []string{"--config", cfg, "--strategy", "none", "--host", "sink", "--out", dir, "--metrics-addr", "127.0.0.1:0"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), nodeEnv+"=1", SecretEnv+"=an attacked node's secret")
	if bin := os.Getenv("STREAMHA_ATTACK_BIN"); bin != "" {
		cmd = exec.Command(bin, append([]string{"node"}, args...)...)
		cmd.Env = append(os.Environ(), SecretEnv+"=an attacked node's secret")
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	n := attackedNode{t: t, cmd: cmd, log: &logs}
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(ReadyFile(dir, "sink"))
		return err == nil && json.Unmarshal(b, &n.ready) == nil
	}, 20*time.Second, 10*time.Millisecond)
	return n
}

// status reads a kB field of the node's /proc status.
func (n *attackedNode) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			k, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return k
		}
	}
	return 0
}

// stop records the peak memory, kills the node and returns its log's line count.
func (n *attackedNode) stop() int {
	n.peak = n.status("VmHWM")
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	_ = n.cmd.Wait()
	return strings.Count(n.log.String(), "\n")
}
