package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// nodeMetrics exposes a node's counters to Prometheus from a private
// registry. The loop goroutine copies the node's figures into atomics
// (update); the collectors only read atomics or thread-safe counters.
type nodeMetrics struct {
	reg *prometheus.Registry

	tuplesIn, checkpointBytes, messages, bytes, fenced, dups atomic.Int64
	epoch                                                    atomic.Uint64
	role                                                     *prometheus.GaugeVec
	lastRole                                                 string
	r                                                        *runner
}

var roles = []string{"source", "sink", "primary", "secondary", "standby", "fenced"}

func newNodeMetrics(r *runner) *nodeMetrics {
	m := &nodeMetrics{reg: prometheus.NewRegistry(), r: r}
	labels := prometheus.Labels{"host": r.opts.Host, "strategy": r.opts.Strategy}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "streamha", Name: name, Help: help, ConstLabels: labels}, f)
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "streamha", Name: name, Help: help, ConstLabels: labels}, f)
	}
	ld := func(a *atomic.Int64) func() float64 { return func() float64 { return float64(a.Load()) } }
	ts := func(f func(TransportStats) int64) func() float64 {
		return func() float64 { return float64(f(r.tr.Stats())) }
	}
	m.role = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "streamha", Name: "role", Help: "1 for the node's current role.", ConstLabels: labels}, []string{"role"})
	m.reg.MustRegister(
		counter("tuples_in_total", "Input tuples processed by the node.", ld(&m.tuplesIn)),
		counter("tuples_out_total", "Tuples sent in data messages (replays included).", ld(&r.env.tuplesOut)),
		counter("messages_sent_total", "Messages the node sent (all kinds).", ld(&m.messages)),
		counter("bytes_sent_total", "Bytes the node sent (wire-size estimate).", ld(&m.bytes)),
		counter("checkpoint_bytes_total", "Checkpoint bytes sent by the strategy.", ld(&m.checkpointBytes)),
		counter("duplicates_dropped_total", "Input tuples dropped as duplicates by sequence number.", ld(&m.dups)),
		counter("stale_dropped_total", "Data messages dropped as coming from a stale epoch.", ld(&m.fenced)),
		counter("transport_messages_written_total", "Messages written to TCP connections.", ts(func(s TransportStats) int64 { return s.SentMessages })),
		counter("transport_bytes_written_total", "Bytes written to TCP connections, framing included.", ts(func(s TransportStats) int64 { return s.SentBytes })),
		counter("transport_messages_received_total", "Verified messages received.", ts(func(s TransportStats) int64 { return s.RecvMessages })),
		counter("transport_dropped_total", "Messages dropped because a peer queue was full or a connection broke.", ts(func(s TransportStats) int64 { return s.Dropped })),
		counter("fault_dropped_total", "Messages dropped by the injected network faults.", ts(func(s TransportStats) int64 { return s.FaultDropped })),
		counter("rejected_connections_total", "Connections closed for bad authentication, handshake or frames.", ts(func(s TransportStats) int64 { return s.Rejected })),
		gauge("outbound_queue_length", "Messages waiting in outbound peer queues.", ts(func(s TransportStats) int64 { return s.QueuedPending })),
		gauge("inbox_length", "Events waiting for the node loop.", func() float64 { return float64(r.in.len()) }),
		gauge("epoch", "The node's epoch for its own fragment.", func() float64 { return float64(m.epoch.Load()) }),
		m.role,
	)
	return m
}

// update copies the node's figures; it runs on the loop goroutine.
func (m *nodeMetrics) update() {
	n := m.r.node
	if n == nil {
		return
	}
	s := n.Stats()
	m.tuplesIn.Store(s.Tuples)
	m.messages.Store(s.Messages)
	m.bytes.Store(s.Bytes)
	m.checkpointBytes.Store(s.CheckpointBytes)
	m.dups.Store(s.Duplicates)
	m.fenced.Store(s.Fenced)
	m.epoch.Store(n.Epoch())
	if s.Role != m.lastRole {
		for _, ro := range roles {
			v := 0.0
			if ro == s.Role {
				v = 1
			}
			m.role.WithLabelValues(ro).Set(v)
		}
		m.lastRole = s.Role
	}
}

// handler serves GET /metrics, GET /healthz (the body "ok", nothing
// else), and the control endpoints GET /members (the hosts this node sees
// alive), POST /start ({"at": unix-ns}, with --await-start), POST /fault
// (JSON FaultRules), POST /stop and the profiler. With a cluster secret
// the control endpoints demand a per-request tag (control_auth.go).
func (r *runner) handler(keys Keys) http.Handler { return r.handlerAt(keys, time.Now) }

// handlerAt is handler with the clock that control timestamps are checked against.
func (r *runner) handlerAt(keys Keys, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(r.met.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	auth := newControlAuth(keys, now)
	noise := &noiseLog{l: r.log}
	authorized := func(w http.ResponseWriter, req *http.Request) bool {
		if !keys.Enabled() {
			return true
		}
		if err := auth.check(req); err != nil {
			noise.Printf("control: rejected %s %s from %s: %v", req.Method, req.URL.Path, req.RemoteAddr, err)
			// Close the connection rather than read (and discard) a body
			// its sender could not sign.
			w.Header().Set("Connection", "close")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return false
		}
		return true
	}
	mux.HandleFunc("GET /members", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(w, req) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"host": r.opts.Host, "started": r.started.Load(), "members": r.det.Members()})
	})
	mux.HandleFunc("POST /fault", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(w, req) {
			return
		}
		var fr FaultRules
		dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&fr); err != nil {
			http.Error(w, fmt.Sprintf("bad fault rules: %v", err), http.StatusBadRequest)
			return
		}
		if err := fr.Validate(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.tr.SetFaults(fr)
		r.log.Printf("control: fault rules now %+v", fr)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(w, req) {
			return
		}
		var body struct {
			At int64 `json:"at"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<10)).Decode(&body); err != nil || body.At <= 0 {
			http.Error(w, `want {"at": unix-nanoseconds}`, http.StatusBadRequest)
			return
		}
		if !r.opts.AwaitStart {
			http.Error(w, "this node was given --start; it does not await one", http.StatusConflict)
			return
		}
		select {
		case r.startAt <- body.At:
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "start instant already set", http.StatusConflict)
		}
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(w, req) {
			return
		}
		r.stopOnce.Do(func() { close(r.stopReq) })
		select {
		case <-r.frozen:
			w.WriteHeader(http.StatusNoContent)
		case <-req.Context().Done():
		}
	})
	// The Go profiler (net/http/pprof), behind the same authorization as
	// the control endpoints: a profile costs CPU and reveals internals.
	guarded := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			if authorized(w, req) {
				h(w, req)
			}
		}
	}
	mux.HandleFunc("GET /debug/pprof/", guarded(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/cmdline", guarded(pprof.Cmdline))
	mux.HandleFunc("GET /debug/pprof/profile", guarded(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/symbol", guarded(pprof.Symbol))
	mux.HandleFunc("POST /debug/pprof/symbol", guarded(pprof.Symbol))
	mux.HandleFunc("GET /debug/pprof/trace", guarded(pprof.Trace))
	return mux
}
