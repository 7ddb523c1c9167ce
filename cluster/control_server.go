package cluster

import (
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/streamha/streamha/internal/netlimit"
)

// Bounds of the control/metrics port. A stranger can hold at most
// controlMaxConnsPerAddr connections from one address and
// controlMaxConns in all, each for at most controlReadTimeout while it
// sends a request and controlIdleTimeout between requests; what it can
// make the node read is one header block (maxControlHeader) per
// connection, since a request's tag is checked before its body.
const (
	controlMaxConns        = 64
	controlMaxConnsPerAddr = 8
	controlHeaderTimeout   = 2 * time.Second
	controlReadTimeout     = 5 * time.Second
	// controlWriteTimeout leaves room for /debug/pprof/profile?seconds=30.
	controlWriteTimeout = 40 * time.Second
	controlIdleTimeout  = 10 * time.Second
)

// newControlServer is the control/metrics HTTP server with its timeouts
// and header bound; its listener is wrapped by netlimit.Limit.
func newControlServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: controlHeaderTimeout,
		ReadTimeout:       controlReadTimeout,
		WriteTimeout:      controlWriteTimeout,
		IdleTimeout:       controlIdleTimeout,
		MaxHeaderBytes:    maxControlHeader,
	}
}

// controlClient is the launcher's HTTP client for the nodes' control
// ports: it dials loopback nodes from the launcher's own loopback address,
// so a local flood from 127.0.0.1 does not use the launcher's share of a
// node's per-address connection cap.
func controlClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return netlimit.DialContext(ctx, "streamha launcher", network, addr, timeout)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     5 * time.Second,
	}}
}

// noiseLog rate-limits log lines that strangers can cause (refused
// control requests, refused data connections, gossip packets that fail to
// decrypt): at most noiseBurst lines per second, then one line saying how
// many were left out.
type noiseLog struct {
	l *log.Logger

	mu         sync.Mutex
	window     time.Time
	n, dropped int
}

const noiseBurst = 10

// Printf logs like log.Printf within the rate.
func (nl *noiseLog) Printf(format string, args ...any) {
	if nl.allow(time.Now()) {
		nl.l.Printf(format, args...)
	}
}

// allow counts one line at now and reports whether it may be written.
func (nl *noiseLog) allow(now time.Time) bool {
	nl.mu.Lock()
	defer nl.mu.Unlock()
	if now.Sub(nl.window) >= time.Second {
		if nl.dropped > 0 {
			nl.l.Printf("(%d similar lines left out in the last second: log rate limit for unauthenticated noise)", nl.dropped)
		}
		nl.window, nl.n, nl.dropped = now, 0, 0
	}
	if nl.n >= noiseBurst {
		nl.dropped++
		return false
	}
	nl.n++
	return true
}
