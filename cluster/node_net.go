package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/internal/netlimit"
)

// The node process's I/O: its output files, the transport and the
// membership, and their release.

// open does the runner's I/O: it creates the output directory and the
// trace file, starts the data transport, joins nothing yet but starts the
// membership (join does), and serves the control endpoint. On an error it
// releases what it opened.
func (r *runner) open() (err error) {
	o := r.opts
	base := time.Now()
	start := base
	if o.Start != 0 {
		start = time.Unix(0, o.Start)
	}
	r.env = &clusterEnv{
		r: r, rng: experiment.Seeded(r.exp.Seed, "node", o.Host), base: base, offset: base.Sub(start),
	}
	if err := r.exp.NodeConfig(o.Host, r.topo, r.strategy, r.env).Validate(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("node: create --out: %w", err)
	}
	keys := DeriveKeys(o.Secret)
	if !keys.Enabled() {
		r.log.Printf("warning: running with --insecure: %s", InsecureNote)
	}
	r.mlog = &memberlistLog{l: r.log, noise: noiseLog{l: r.log}}
	_ = os.Remove(TraceFileOf(o.Out, o.Host)) // a whole trace of an earlier run would outlive a failed one
	f, err := os.Create(PartialTraceFile(o.Out, o.Host))
	if err != nil {
		return fmt.Errorf("node: trace: %w", err)
	}
	r.env.file = f
	r.env.trace = bufio.NewWriterSize(f, 256<<10)
	r.env.events = ha.NewEventWriter(r.env.trace)
	defer func() {
		if err != nil {
			r.close()
			f.Close()
		}
	}()
	r.tr, err = NewTransport(TransportConfig{
		Host: o.Host, Keys: keys, Listen: o.DataAddr, Logger: r.log,
		Deliver: func(_ string, m *ha.Message) { r.in.push(ha.Input{Kind: ha.InputMessage, Msg: m}) },
		Resolve: r.resolve,
		// Only hosts of the topology may open a connection: a stranger's
		// hello is refused before any message of it is read.
		Peer: func(h string) bool { _, ok := r.topo.FragOf(h); return ok },
	})
	if err != nil {
		return err
	}
	dataAdv := o.DataAdvertise
	if dataAdv == "" {
		dataAdv = advertised(r.tr.Addr(), o.Advertise)
	}
	r.det, err = NewDetector(DetectorConfig{
		Host: o.Host, Bind: o.Bind, Advertise: o.Advertise, DataAddr: dataAdv,
		Profile: o.Profile, Keys: keys, Logger: log.New(r.mlog, "", 0),
		Notify: r.membership,
	}, r.tr.faults)
	if err != nil {
		return err
	}
	r.met = newNodeMetrics(r)
	if o.MetricsAddr != "" {
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return fmt.Errorf("node: --metrics-addr: %w", err)
		}
		r.http = newControlServer(r.handler(keys))
		go func() { _ = r.http.Serve(netlimit.Limit(ln, controlMaxConns, controlMaxConnsPerAddr)) }()
		r.opts.MetricsAddr = ln.Addr().String()
	}
	r.env.closer = f
	return nil
}

// advertised builds the published data address from the listen address
// and the gossip advertise host.
func advertised(listen, adv string) string {
	h, p, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	ip := net.ParseIP(h)
	if ip == nil || !ip.IsUnspecified() {
		return listen
	}
	if adv != "" {
		if ah, _, err := net.SplitHostPort(adv); err == nil {
			return net.JoinHostPort(ah, p)
		}
		return net.JoinHostPort(adv, p)
	}
	if hn, err := os.Hostname(); err == nil {
		return net.JoinHostPort(hn, p)
	}
	return listen
}

type memberlistLog struct {
	l       *log.Logger
	closing atomic.Bool
	noise   noiseLog
}

// Write forwards memberlist's warnings and errors (not its debug chatter,
// nor the send errors of its goroutines racing its own shutdown).
func (m *memberlistLog) Write(p []byte) (int, error) {
	s := strings.TrimSpace(string(p))
	if strings.Contains(s, "[DEBUG]") || (m.closing.Load() && strings.Contains(s, "use of closed network connection")) {
		return len(p), nil
	}
	if strings.Contains(s, "[ERR]") {
		// What strangers cause (packets that fail to decrypt, streams
		// that fail to read) is an error line: rate-limited. Suspicions
		// and deaths are not.
		m.noise.Printf("%s", s)
		return len(p), nil
	}
	m.l.Print(s)
	return len(p), nil
}

func (r *runner) resolve(host string) string {
	if a := r.opts.Peers[host]; a != "" {
		return a
	}
	return r.det.DataAddr(host)
}

func (r *runner) membership(host string, alive bool) {
	if host == r.opts.Host || !r.hosts[host] {
		return
	}
	k := ha.InputPeerDown
	if alive {
		k = ha.InputPeerUp
	}
	r.in.push(ha.Input{Kind: k, Name: host})
}

// join joins the membership and writes the ready file.
func (r *runner) join(ctx context.Context) error {
	if len(r.opts.Join) > 0 {
		deadline := time.Now().Add(10 * time.Second)
		for {
			n, err := r.det.Join(r.opts.Join)
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s: join %s: %w", r.opts.Host, strings.Join(r.opts.Join, ","), err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	rd := Ready{Host: r.opts.Host, PID: os.Getpid(), Gossip: r.det.Addr(), Data: r.tr.Addr(), Metrics: r.opts.MetricsAddr}
	b, _ := json.Marshal(rd)
	tmp := ReadyFile(r.opts.Out, r.opts.Host) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("node: ready file: %w", err)
	}
	if err := os.Rename(tmp, ReadyFile(r.opts.Out, r.opts.Host)); err != nil {
		return fmt.Errorf("node: ready file: %w", err)
	}
	r.log.Printf("ready: gossip %s, data %s, metrics %s, strategy %s, seed %d", rd.Gossip, rd.Data, rd.Metrics, r.opts.Strategy, r.exp.Seed)
	return nil
}

// close releases everything, once: the HTTP server, then the transport
// (its goroutines use the detector to resolve peers), then the membership,
// then the trace file.
func (r *runner) close() {
	r.closeOnce.Do(func() {
		if r.env != nil {
			r.env.stopTimers()
		}
		r.in.close()
		if r.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = r.http.Shutdown(ctx)
			cancel()
		}
		if r.tr != nil {
			_ = r.tr.Close()
		}
		if r.det != nil {
			r.mlog.closing.Store(true)
			_ = r.det.Shutdown(true)
		}
		if r.env != nil && r.env.closer != nil {
			_ = r.env.trace.Flush()
			_ = r.env.closer.Close()
		}
	})
}
