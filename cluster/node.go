package cluster

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// NodeOptions configure one `streamha node` process. A zero field takes
// its default (withDefaults); validate checks what needs nothing read.
type NodeOptions struct {
	// Experiment, when set, is the experiment already read (the CLI reads
	// --config with the built-in examples as a fallback); Config and
	// AllowLarge are then not read again.
	Experiment *experiment.Experiment
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

// Defaults of NodeOptions, the values `streamha node` shows in its help.
const (
	// DefaultBind is the gossip and data-plane address: loopback, a
	// port the system picks.
	DefaultBind = "127.0.0.1:0"
	// DefaultOut is the directory for the trace, ready file and logs.
	DefaultOut = "."
)

// withDefaults fills the fields left zero: Out, Linger, Bind and DataAddr.
func (o NodeOptions) withDefaults() NodeOptions {
	if o.Out == "" {
		o.Out = DefaultOut
	}
	if o.Linger <= 0 {
		o.Linger = DefaultLinger
	}
	if o.Bind == "" {
		o.Bind = DefaultBind
	}
	if o.DataAddr == "" {
		o.DataAddr = DefaultBind
	}
	return o
}

// validate checks the options on their own, before anything is read: the
// required fields, the secret, and the combinations that cannot work.
func (o NodeOptions) validate() error {
	switch {
	case o.Host == "" && o.HostOrdinal == "":
		return errors.New("node: --host (or --host-ordinal) is required")
	case o.Strategy == "":
		return errors.New("node: --strategy is required")
	case o.AwaitStart && o.MetricsAddr == "":
		return errors.New("node: --await-start needs the control endpoint (--metrics-addr)")
	}
	if err := CheckSecret(o.Secret, o.Insecure); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// checkStartInstant refuses a start instant more than a second past: a
// process restarted after the run began would start fresh in its initial
// role and corrupt the run.
func (o NodeOptions) checkStartInstant() error {
	if o.Start == 0 || o.AwaitStart {
		return nil
	}
	if late := time.Since(time.Unix(0, o.Start)); late > time.Second {
		return fmt.Errorf("node %s: the start instant passed %s ago: refusing to join a run in progress "+
			"(a restarted host would start fresh as its initial role and corrupt the run)", o.Host, late.Round(time.Second))
	}
	return nil
}

// nodePlan is what a node runs, read from the experiment (the only I/O is
// reading its file): the experiment, the strategy, the topology and this
// process's host.
type nodePlan struct {
	exp      *experiment.Experiment
	strategy ha.Strategy
	topo     *ha.Topology
	host     string
}

// planNode reads the experiment, sets the seed, builds the strategy and
// resolves this process's host in the topology.
func planNode(o NodeOptions) (nodePlan, error) {
	var p nodePlan
	var err error
	switch {
	case o.Experiment != nil:
		p.exp = o.Experiment
	case o.Config == "":
		p.exp = experiment.Default()
	default:
		if p.exp, err = experiment.LoadWith(o.Config, experiment.ParseOptions{AllowLarge: o.AllowLarge}); err != nil {
			return p, err
		}
	}
	if o.Seed != nil {
		p.exp.Seed = *o.Seed
	}
	if p.strategy, err = strategies.Build(o.Strategy, p.exp.ParamsFor(o.Strategy)); err != nil {
		return p, err
	}
	p.topo = p.exp.Topology(p.strategy)
	p.host = o.Host
	if p.host == "" {
		if p.host, err = hostByOrdinal(p.topo, o.HostOrdinal); err != nil {
			return p, err
		}
	}
	if _, ok := p.topo.FragOf(p.host); !ok {
		return p, fmt.Errorf("node: host %q is not in the topology under %s (hosts: %s)", p.host, o.Strategy, strings.Join(p.topo.Hosts(), ", "))
	}
	return p, nil
}

// inboxMaxMessages bounds the data messages waiting for the node loop.
const inboxMaxMessages = 4096

// newRunner builds a node process in three steps: the options' defaults
// and the checks that read nothing (withDefaults, validate), the plan read
// from the experiment (planNode), then the I/O (runner.open: the output
// directory, the trace file, the transport, the membership and the
// control endpoint).
func newRunner(o NodeOptions) (*runner, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	p, err := planNode(o)
	if err != nil {
		return nil, err
	}
	o.Host = p.host
	if err := o.checkStartInstant(); err != nil {
		return nil, err
	}
	lg := o.Logger
	if lg == nil {
		lg = log.New(os.Stderr, o.Host+" ", log.LstdFlags|log.Lmicroseconds)
	}
	r := &runner{
		opts: o, log: lg, exp: p.exp, topo: p.topo, end: p.exp.End(), strategy: p.strategy,
		hosts: map[string]bool{}, in: newInbox(inboxMaxMessages),
		stopReq: make(chan struct{}), frozen: make(chan struct{}), startAt: make(chan int64, 1),
	}
	for _, h := range p.topo.Hosts() {
		r.hosts[h] = true
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
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
