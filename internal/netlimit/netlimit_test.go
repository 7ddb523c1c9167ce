package netlimit

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitCapsPerAddressAndReleases: a third connection from one address
// under a per-address cap of two is closed unread, and closing a held one
// frees its place.
func TestLimitCapsPerAddressAndReleases(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := Limit(inner, 10, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	dial()
	held := []net.Conn{<-accepted, <-accepted}
	third := dial()
	require.NoError(t, third.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = third.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the third connection from 127.0.0.1 is closed unread")
	assert.Equal(t, int64(1), l.Refused())
	require.NoError(t, held[0].Close())
	dial()
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("a closed connection did not free its place")
	}
	assert.Equal(t, 2, l.Open())
}

// TestLoopbackForIsNot127001: a host's loopback source address is in
// 127.0.0.0/8, stable, and never 127.0.0.1.
func TestLoopbackForIsNot127001(t *testing.T) {
	for _, h := range []string{"A", "B", "B.1", "sink", "src", "streamha launcher"} {
		ip := LoopbackFor(h)
		assert.True(t, ip.IsLoopback(), h)
		assert.False(t, ip.Equal(net.IPv4(127, 0, 0, 1)), h)
		assert.Equal(t, ip, LoopbackFor(h), h)
	}
	assert.NotEqual(t, LoopbackFor("A"), LoopbackFor("B"))
}
