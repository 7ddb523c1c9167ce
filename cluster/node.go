package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/internal/netlimit"
	"github.com/streamha/streamha/strategies"
)

// NodeOptions configure one `streamha node` process.
type NodeOptions struct {
	// Config is the experiment YAML file ("" = the built-in default).
	Config string
	// AllowLarge checks Config against experiment.LargeLimits.
	AllowLarge bool
	// Strategy is the strategy every node of the run uses.
	Strategy string
	// Seed, when set, overrides the experiment's seed.
	Seed *uint64
	// Host is this process's host name (src, A, B, B.1, …, sink).
	Host string
	// HostOrdinal, when Host is empty, picks the host by the trailing
	// number of a name such as a StatefulSet pod's ("streamha-3" → the
	// fourth host of the topology, in Topology.Hosts order).
	HostOrdinal string
	// Bind is the gossip (memberlist) address, Advertise the address
	// others reach it at ("" = Bind), Join the gossip addresses of nodes
	// already running.
	Bind, Advertise string
	Join            []string
	// DataAddr is the TCP data-plane listen address.
	DataAddr string
	// DataAdvertise is the data address published to peers ("" = derived
	// from DataAddr and Advertise).
	DataAdvertise string
	// Peers is an optional static map host → data address; hosts missing
	// from it are resolved through the membership metadata.
	Peers map[string]string
	// MetricsAddr serves /metrics and the control endpoints ("" = off).
	MetricsAddr string
	// Out is the directory for this node's trace, ready file and logs.
	Out string
	// Secret is the cluster secret. Without one the node refuses to start
	// unless Insecure is set (CheckSecret).
	Secret []byte
	// Insecure lets the node run without a secret: no encryption and no
	// authentication (InsecureNote says what that exposes).
	Insecure bool
	// Start is the common start instant as Unix nanoseconds (0 = now).
	Start int64
	// AwaitStart makes the node wait, once ready, for POST /start
	// {"at": unix-ns} on its control endpoint instead of using Start.
	AwaitStart bool
	// Profile is the detector profile (ProfileTuned by default).
	Profile string
	// Hold keeps the process (and its /metrics) alive after the run until
	// it is told to stop, for orchestrators that restart exited containers.
	Hold bool
	// Linger is how long the node keeps its membership after the run
	// ended, so that peers finish before anyone sees it leave
	// (DefaultLinger on the command line).
	Linger time.Duration
	// CPUProfile, when set, is the file the node writes a Go CPU profile
	// (runtime/pprof) of its run to, from the start instant until it
	// stops; read it with `go tool pprof`.
	CPUProfile string
	// Logger receives the node's log (default: stderr).
	Logger *log.Logger
}

// Ready is what a node writes to <out>/<host>.ready.json once it listens.
type Ready struct {
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Gossip  string `json:"gossip"`
	Data    string `json:"data"`
	Metrics string `json:"metrics,omitempty"`
}

// ReadyFile is the path of host's ready file in dir.
func ReadyFile(dir, host string) string { return filepath.Join(dir, host+".ready.json") }

// TraceFileOf is the path of host's trace in dir.
func TraceFileOf(dir, host string) string { return filepath.Join(dir, host+".trace.jsonl") }

// inbox is the node loop's queue: unbounded for membership events
// (their producers must never block), bounded for data messages
// (readers wait, which pushes back on the sending peer through TCP).
type inbox struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []ha.Input
	msgs    int
	maxMsgs int
	closed  bool
	notify  chan struct{}
}

func newInbox(maxMsgs int) *inbox {
	b := &inbox{maxMsgs: maxMsgs, notify: make(chan struct{}, 1)}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *inbox) push(it ha.Input) {
	b.mu.Lock()
	if it.Kind == ha.InputMessage {
		for b.msgs >= b.maxMsgs && !b.closed {
			b.cond.Wait()
		}
	}
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.items = append(b.items, it)
	if it.Kind == ha.InputMessage {
		b.msgs++
	}
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// take returns every queued item.
func (b *inbox) take(buf []ha.Input) []ha.Input {
	b.mu.Lock()
	out := append(buf[:0], b.items...)
	clear(b.items)
	b.items = b.items[:0]
	b.msgs = 0
	b.cond.Broadcast()
	b.mu.Unlock()
	return out
}

// dropMembership discards queued PeerDown/PeerUp items, keeping the
// order of everything else.
func (b *inbox) dropMembership() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items = slices.DeleteFunc(b.items, func(it ha.Input) bool { return it.Kind == ha.InputPeerDown || it.Kind == ha.InputPeerUp })
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.items = nil
	b.cond.Broadcast()
	b.mu.Unlock()
}

// clusterEnv is the real ha.Env of one node. Every method runs on the
// node loop goroutine; the loop fires the timers it arms.
type clusterEnv struct {
	r      *runner
	rng    *rand.Rand
	base   time.Time     // monotonic reading at process start
	offset time.Duration // base − start instant
	trace  *bufio.Writer
	events *ha.EventWriter // on trace
	tErr   error
	// file is the partial trace file; nEvents counts the events written
	// to it; finished is set once the end record is written (trace_end.go).
	file     *os.File
	nEvents  int64
	finished bool

	timers timerQueue
	copies sendSlabs // what Send queues (used by the node loop only)

	tuplesOut atomic.Int64
	closer    io.Closer
}

func (e *clusterEnv) Now() time.Duration { return e.offset + time.Since(e.base) }

func (e *clusterEnv) Rand() *rand.Rand { return e.rng }

func (e *clusterEnv) Work(int, int) {}

// maxSendTuples splits large data messages (a source that woke late
// emits everything due at once) well below ha.MaxTuplesPerMessage, which
// receivers enforce.
const maxSendTuples = 8192

// Send queues a copy of m, Tuples included, for the transport's writer:
// the node lends m for the call only (ha.Env). A large batch is split
// into messages of at most maxSendTuples.
func (e *clusterEnv) Send(to string, m *ha.Message) {
	m = e.copies.copy(m)
	if m.Kind != ha.KindData {
		e.r.tr.Send(to, m)
		return
	}
	e.tuplesOut.Add(int64(len(m.Tuples)))
	for len(m.Tuples) > maxSendTuples {
		c := *m
		c.Tuples = m.Tuples[:maxSendTuples:maxSendTuples]
		e.r.tr.Send(to, &c)
		rest := *m
		rest.Tuples = m.Tuples[maxSendTuples:]
		m = &rest
	}
	e.r.tr.Send(to, m)
}
func (e *clusterEnv) Trace(ev ha.Event) {
	if e.tErr != nil || e.finished {
		return
	}
	if err := e.events.Write(&ev); err != nil {
		e.tErr = err
		e.r.log.Printf("trace: %v (tracing stopped; the node will exit with an error)", err)
		return
	}
	e.nEvents++
}

// SetTimer arms a timer the node loop fires (timerQueue).
func (e *clusterEnv) SetTimer(d time.Duration, name string) {
	e.timers.arm(e.Now()+max(d, 0), name)
}

func (e *clusterEnv) stopTimers() { e.timers.stop() }

// runner is one running node process.
type runner struct {
	opts  NodeOptions
	log   *log.Logger
	exp   *experiment.Experiment
	topo  *ha.Topology
	hosts map[string]bool
	// strategy and exp configure the ha.Node built at the start
	// (experiment.NodeConfig).
	strategy ha.Strategy
	end      time.Duration

	in   *inbox
	tr   *Transport
	det  *Detector
	env  *clusterEnv
	node *ha.Node
	http *http.Server
	met  *nodeMetrics
	mlog *memberlistLog

	stopReq   chan struct{} // /stop asked the loop to finish
	startAt   chan int64    // POST /start with --await-start
	stopOnce  sync.Once
	closeOnce sync.Once
	frozen    chan struct{} // closed once stats are written
	busy      time.Duration
	cpu0      time.Duration // process CPU time at the start instant
	started   atomic.Bool
}

// processCPU is the CPU time (user + system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// RunNode runs one node until the experiment's end (plus Linger), ctx is
// cancelled (SIGTERM, Ctrl-C) or the control endpoint asks it to stop. It
// writes its trace to <out>/<host>.trace.jsonl.partial, ending with an
// EvStats event and the end record, and renames it to <host>.trace.jsonl
// when it is whole (trace_end.go); a failed trace write is its error.
func RunNode(ctx context.Context, o NodeOptions) (err error) {
	r, err := newRunner(o)
	if err != nil {
		return err
	}
	defer r.close()
	if err := r.join(ctx); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(o.CPUProfile)
	if err != nil {
		return err
	}
	err = r.run(ctx)
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if err := r.finishTrace(); err != nil {
		r.log.Print(err)
		return err
	}
	if o.Hold {
		r.log.Printf("run over; holding until stopped (--hold)")
		select {
		case <-ctx.Done():
		case <-r.stopReq:
		}
	}
	return nil
}

// startCPUProfile starts the Go CPU profiler writing to file ("" = no
// profile) and returns the function that stops it and closes the file.
func startCPUProfile(file string) (stop func() error, err error) {
	if file == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("node: --cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("node: --cpuprofile %s: %w", file, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("node: --cpuprofile %s: %w", file, err)
		}
		return nil
	}, nil
}

func newRunner(o NodeOptions) (*runner, error) {
	if o.Host == "" && o.HostOrdinal == "" {
		return nil, errors.New("node: --host (or --host-ordinal) is required")
	}
	if err := CheckSecret(o.Secret, o.Insecure); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if o.Out == "" {
		o.Out = "."
	}
	if o.Linger <= 0 {
		o.Linger = time.Second
	}
	if o.Bind == "" {
		o.Bind = "127.0.0.1:0"
	}
	if o.DataAddr == "" {
		o.DataAddr = "127.0.0.1:0"
	}
	lg := o.Logger
	if lg == nil {
		lg = log.New(os.Stderr, o.Host+" ", log.LstdFlags|log.Lmicroseconds)
	}
	var e *experiment.Experiment
	var err error
	if o.Config == "" {
		e = experiment.Default()
	} else if e, err = experiment.LoadWith(o.Config, experiment.ParseOptions{AllowLarge: o.AllowLarge}); err != nil {
		return nil, err
	}
	if o.Seed != nil {
		e.Seed = *o.Seed
	}
	if o.Strategy == "" {
		return nil, errors.New("node: --strategy is required")
	}
	st, err := strategies.Build(o.Strategy, e.ParamsFor(o.Strategy))
	if err != nil {
		return nil, err
	}
	topo := e.Topology(st)
	if o.Host == "" {
		if o.Host, err = hostByOrdinal(topo, o.HostOrdinal); err != nil {
			return nil, err
		}
		if o.Logger == nil {
			lg = log.New(os.Stderr, o.Host+" ", log.LstdFlags|log.Lmicroseconds)
		}
	}
	if _, ok := topo.FragOf(o.Host); !ok {
		return nil, fmt.Errorf("node: host %q is not in the topology under %s (hosts: %s)", o.Host, o.Strategy, strings.Join(topo.Hosts(), ", "))
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("node: create --out: %w", err)
	}
	if o.AwaitStart && o.MetricsAddr == "" {
		return nil, errors.New("node: --await-start needs the control endpoint (--metrics-addr)")
	}
	r := &runner{
		opts: o, log: lg, exp: e, topo: topo, end: e.End(), strategy: st,
		hosts: map[string]bool{}, in: newInbox(4096),
		stopReq: make(chan struct{}), frozen: make(chan struct{}), startAt: make(chan int64, 1),
	}
	for _, h := range topo.Hosts() {
		r.hosts[h] = true
	}
	if o.Start != 0 && !o.AwaitStart {
		if late := time.Since(time.Unix(0, o.Start)); late > time.Second {
			return nil, fmt.Errorf("node %s: the start instant passed %s ago: refusing to join a run in progress "+
				"(a restarted host would start fresh as its initial role and corrupt the run)", o.Host, late.Round(time.Second))
		}
	}
	keys := DeriveKeys(o.Secret)
	if !keys.Enabled() {
		lg.Printf("warning: running with --insecure: %s", InsecureNote)
	}
	r.mlog = &memberlistLog{l: lg, noise: noiseLog{l: lg}}
	_ = os.Remove(TraceFileOf(o.Out, o.Host)) // a whole trace of an earlier run would outlive a failed one
	f, err := os.Create(PartialTraceFile(o.Out, o.Host))
	if err != nil {
		return nil, fmt.Errorf("node: trace: %w", err)
	}
	base := time.Now()
	start := base
	if o.Start != 0 {
		start = time.Unix(0, o.Start)
	}
	r.env = &clusterEnv{
		r: r, rng: experiment.Seeded(e.Seed, "node", o.Host), base: base, offset: base.Sub(start),
	}
	if err := e.NodeConfig(o.Host, topo, st, r.env).Validate(); err != nil {
		f.Close()
		return nil, fmt.Errorf("node: %w", err)
	}
	r.env.file = f
	r.env.trace = bufio.NewWriterSize(f, 256<<10)
	r.env.events = ha.NewEventWriter(r.env.trace)
	traceFile := f
	ok := false
	defer func() {
		if !ok {
			r.close()
			traceFile.Close()
		}
	}()
	r.tr, err = NewTransport(TransportConfig{
		Host: o.Host, Keys: keys, Listen: o.DataAddr, Logger: lg,
		Deliver: func(_ string, m *ha.Message) { r.in.push(ha.Input{Kind: ha.InputMessage, Msg: m}) },
		Resolve: r.resolve,
		// Only hosts of the topology may open a connection: a stranger's
		// hello is refused before any message of it is read.
		Peer: func(h string) bool { _, ok := r.topo.FragOf(h); return ok },
	})
	if err != nil {
		return nil, err
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
		return nil, err
	}
	r.met = newNodeMetrics(r)
	if o.MetricsAddr != "" {
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return nil, fmt.Errorf("node: --metrics-addr: %w", err)
		}
		r.http = newControlServer(r.handler(keys))
		go func() { _ = r.http.Serve(netlimit.Limit(ln, controlMaxConns, controlMaxConnsPerAddr)) }()
		o.MetricsAddr = ln.Addr().String()
		r.opts.MetricsAddr = o.MetricsAddr
	}
	r.env.closer = traceFile
	ok = true
	return r, nil
}

// hostByOrdinal maps "name-N" to the N-th host of the topology.
func hostByOrdinal(t *ha.Topology, name string) (string, error) {
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.Atoi(name[i+1:])
	hosts := t.Hosts()
	if err != nil || n < 0 || n >= len(hosts) {
		return "", fmt.Errorf("node: --host-ordinal %q: want name-N with N in [0, %d) (hosts in order: %s)", name, len(hosts), strings.Join(hosts, ", "))
	}
	return hosts[n], nil
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

// run waits for the start instant and runs the loop.
func (r *runner) run(ctx context.Context) error {
	if r.opts.AwaitStart {
		select {
		case at := <-r.startAt:
			r.env.offset = r.env.base.Sub(time.Unix(0, at))
		case <-ctx.Done():
			r.freeze()
			return nil
		case <-r.stopReq:
			r.freeze()
			return nil
		}
	}
	if w := -r.env.Now(); w > 0 {
		t := time.NewTimer(w)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			r.freeze()
			return nil
		case <-r.stopReq:
			t.Stop()
			r.freeze()
			return nil
		}
	}
	var err error
	r.node, err = ha.NewNode(r.exp.NodeConfig(r.opts.Host, r.topo, r.strategy, r.env))
	if err != nil {
		return err
	}
	r.cpu0 = processCPU()
	r.started.Store(true)
	r.handle(func() { r.node.Start() })
	// Membership changes seen during the startup storm (processes still
	// starting, CPU saturated) are dropped; what counts is who is a member
	// at the start instant.
	r.in.dropMembership()
	alive := map[string]bool{}
	for _, h := range r.det.Members() {
		alive[h] = true
	}
	for _, h := range r.topo.Hosts() {
		if h != r.opts.Host && !alive[h] {
			r.log.Printf("start: %s is not a member at the start instant; declaring it down", h)
			r.handle(func() { r.node.Handle(ha.Input{Kind: ha.InputPeerDown, Name: h}) })
		}
	}
	endTimer := time.NewTimer(max(0, r.end-r.env.Now()))
	defer endTimer.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	wakeAt := time.Duration(-1) // the env time wake is set for, -1 = none
	var buf []ha.Input
	for {
		r.fireTimers()
		var wakeC <-chan time.Time
		now := r.env.Now()
		if d, ok := r.env.timers.next(now); ok {
			switch {
			case d <= 0:
				wakeC = alreadyDue
			case now+d != wakeAt:
				wake.Reset(d)
				wakeAt = now + d
				fallthrough
			default:
				wakeC = wake.C
			}
		}
		select {
		case <-wakeC:
			if wakeC != alreadyDue {
				wakeAt = -1
			}
		case <-ctx.Done():
			r.freeze()
			return nil
		case <-r.stopReq:
			r.freeze()
			return nil
		case <-endTimer.C:
			r.freeze()
			t := time.NewTimer(r.opts.Linger)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			return nil
		case <-tick.C:
			if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
				r.env.tErr = err
				r.log.Printf("trace: %v (tracing stopped; the node will exit with an error)", err)
			}
			r.met.update()
		case <-r.in.notify:
			buf = r.in.take(buf)
			for i := range buf {
				it := buf[i]
				buf[i] = ha.Input{}
				r.handle(func() { r.node.Handle(it) })
			}
		}
	}
}

// alreadyDue is a closed channel: the loop selects on it when a timer is
// due already, so waiting inputs and due timers take turns.
var alreadyDue = func() chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// fireTimers runs the timers due now that were armed before it started.
func (r *runner) fireTimers() {
	now, mark := r.env.Now(), r.env.timers.mark()
	for {
		name, ok := r.env.timers.due(now, mark)
		if !ok {
			return
		}
		r.handle(func() { r.node.Handle(ha.Input{Kind: ha.InputTimer, Name: name}) })
	}
}

// handle runs one handler and measures its busy time (the CPU figure).
func (r *runner) handle(f func()) {
	t0 := time.Now()
	f()
	r.busy += time.Since(t0)
}

// freeze stops processing, traces the node's counters and flushes the trace.
func (r *runner) freeze() {
	select {
	case <-r.frozen:
		return
	default:
	}
	r.env.stopTimers()
	r.in.close()
	if r.node != nil {
		st := r.node.Stats()
		st.CPU = int64(r.busy)
		st.ProcessCPU = int64(processCPU() - r.cpu0)
		r.env.Trace(ha.Event{T: r.env.Now(), Kind: ha.EvStats, Host: r.opts.Host, Stats: &st})
		r.met.update()
	}
	if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
		r.env.tErr = err
	}
	ts := r.tr.Stats()
	if b, err := json.Marshal(ts); err == nil {
		r.env.Trace(ha.Event{T: r.env.Now(), Kind: ha.EvNote, Host: r.opts.Host, Note: transportNote + string(b)})
	}
	if err := r.env.trace.Flush(); err != nil && r.env.tErr == nil {
		r.env.tErr = err
	}
	r.log.Printf("stopped: sent %d messages (%d bytes), received %d, dropped %d (queue full or broken connection), %d by faults, rejected %d connections",
		ts.SentMessages, ts.SentBytes, ts.RecvMessages, ts.Dropped, ts.FaultDropped, ts.Rejected)
	close(r.frozen)
}

// transportNote prefixes the EvNote a node traces at the end with its
// transport counters (JSON TransportStats).
const transportNote = "transport "

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
