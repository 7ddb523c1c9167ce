// Package netlimit bounds what strangers can hold on a listening port: a
// cap on connections in total and per source address (loopback included),
// and dialers that give each of a deployment's own processes its own
// loopback source address, so a local flood from 127.0.0.1 does not share
// their per-address allowance.
package netlimit

import (
	"context"
	"errors"
	"hash/fnv"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Caps counts the connections open in total and per source address and
// admits a new one only while both are below their caps. The zero value
// admits nothing; make one with NewCaps.
type Caps struct {
	max, perAddr int

	mu      sync.Mutex
	open    int
	byAddr  map[string]int
	refused atomic.Int64
}

// NewCaps counts within the caps total and perAddr (a cap ≤ 0 means 1).
func NewCaps(total, perAddr int) *Caps {
	return &Caps{max: max(1, total), perAddr: max(1, perAddr), byAddr: map[string]int{}}
}

// Admit counts c as open and returns the function that releases it (call
// it once, when c closes), or closes c, counts it refused and returns
// false when a cap is reached.
func (k *Caps) Admit(c net.Conn) (release func(), ok bool) {
	addr := SourceAddr(c)
	k.mu.Lock()
	ok = k.open < k.max && k.byAddr[addr] < k.perAddr
	if ok {
		k.open++
		k.byAddr[addr]++
	}
	k.mu.Unlock()
	if !ok {
		k.refused.Add(1)
		_ = c.Close()
		return nil, false
	}
	var once sync.Once
	return func() { once.Do(func() { k.release(addr) }) }, true
}

func (k *Caps) release(addr string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.open--
	if k.byAddr[addr]--; k.byAddr[addr] <= 0 {
		delete(k.byAddr, addr)
	}
}

// Refused counts the connections closed unread because a cap was reached.
func (k *Caps) Refused() int64 { return k.refused.Load() }

// Open is the number of connections open now.
func (k *Caps) Open() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.open
}

// Listener accepts connections from an inner listener within its Caps; a
// connection beyond a cap is closed unread at once.
type Listener struct {
	net.Listener
	*Caps
}

// Limit wraps ln with the caps total and perAddr (per source address); a
// cap ≤ 0 means 1.
func Limit(ln net.Listener, total, perAddr int) *Listener {
	return &Listener{Listener: ln, Caps: NewCaps(total, perAddr)}
}

// Accept returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if release, ok := l.Admit(c); ok {
			return &conn{Conn: c, release: release}, nil
		}
	}
}

type conn struct {
	net.Conn
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// SourceAddr is the IP c comes from (its whole remote address when that
// has no port).
func SourceAddr(c net.Conn) string {
	a := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(a); err == nil {
		return h
	}
	return a
}

// LoopbackFor is the loopback address a process named name dials
// loopback peers from: 127.x.y.z taken from a hash of the name, never
// 127.0.0.1 (where anything local connects from by default).
func LoopbackFor(name string) net.IP {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	v := h.Sum32()
	ip := net.IPv4(127, byte(v>>16), byte(v>>8), byte(v))
	if ip.Equal(net.IPv4(127, 0, 0, 1)) || v&0xffffff == 0 || v&0xff == 0xff {
		ip = net.IPv4(127, byte(v>>16)|1, byte(v>>8), 2)
	}
	return ip
}

// DialContext dials addr; when addr's host is a loopback IP it dials from
// LoopbackFor(name) first, and from the default address if this system
// cannot bind it (only 127.0.0.1 is configured on some systems).
func DialContext(ctx context.Context, name, network, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if h, _, err := net.SplitHostPort(addr); err == nil && name != "" {
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() && ip.To4() != nil {
			ld := d
			ld.LocalAddr = &net.TCPAddr{IP: LoopbackFor(name)}
			c, err := ld.DialContext(ctx, network, addr)
			if err == nil || !isBindErr(err) {
				return c, err
			}
		}
	}
	return d.DialContext(ctx, network, addr)
}

// isBindErr reports whether err is the failure to bind a local address.
func isBindErr(err error) bool {
	var se *os.SyscallError
	if errors.As(err, &se) && se.Syscall == "bind" {
		return true
	}
	return errors.Is(err, syscall.EADDRNOTAVAIL)
}
