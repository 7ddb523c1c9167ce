package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// LaunchConfig configures `streamha cluster`: one experiment run on real
// processes on this machine, once per strategy.
type LaunchConfig struct {
	Experiment *experiment.Experiment
	// Reference computes the expected output the runs are classified
	// against (the CLI passes the simulator's, sim.ReferenceTrace).
	Reference Reference
	// Strategies are run one after another, each with the fault schedule.
	Strategies []string
	// Exe and Args start a node: Exe Args... node-flags. The CLI uses its
	// own executable with Args ["node"].
	Exe  string
	Args []string
	// Env is added to each child's environment.
	Env []string
	// Out is the output directory; each run gets a subdirectory with the
	// nodes' traces, ready files and logs.
	Out string
	// Secret, when set, is handed to the nodes through $STREAMHA_SECRET.
	// When it is empty and Insecure is not set, Launch draws a fresh
	// random secret for its nodes (they are its children, and the secret
	// goes through their environment only), so a launched cluster is
	// authenticated whether or not the user gave a secret.
	Secret []byte
	// Insecure runs the nodes without a secret (--insecure on each node):
	// see InsecureNote.
	Insecure bool
	// Profile is the detector profile (default ProfileTuned).
	Profile string
	// Startup bounds the time from launching a run's processes until every
	// node is ready and sees every other as a member (default 30 s). The
	// launcher then sets the common start instant shortly ahead
	// (POST /start on every node).
	Startup time.Duration
	// Baseline runs the no-HA strategy failure-free first: the overhead
	// ratios are relative to it.
	Baseline bool
	// FailureFreeOverhead measures each strategy's overhead in an extra
	// failure-free run (as the simulator does) instead of in the faulty run.
	FailureFreeOverhead bool
	// OverheadRounds, when above 1, repeats the overhead measurement
	// (it needs Baseline and FailureFreeOverhead): after every strategy's
	// faulty run, each round runs the no-HA baseline and then every
	// strategy failure-free, and each overhead is the median over the
	// rounds of its ratio to the same round's baseline
	// (metrics.MedianOverhead). Real timing varies from run to run and a
	// loaded machine drifts; alternating both sides pairs them in time.
	OverheadRounds int
	// Chaos, when set, replaces the experiment's fault schedule with
	// random faults within the fault model (PlanChaos, drawn per strategy
	// topology) and checks the chaos invariants after each run
	// (RunOutcome.Chaos). Node failures then become verdicts, not errors.
	Chaos *ChaosConfig
	// CPUProfileDir, when set, makes every node write a Go CPU profile of
	// its run to <CPUProfileDir>/<run>/<host>.cpu.pprof (node --cpuprofile),
	// <run> being the run's subdirectory name (baseline-none, amnesia, …).
	CPUProfileDir string
	// Netns runs every host in its own Linux network namespace on a
	// bridge, with partitions cut in the network (netns.go; root only).
	Netns bool
	// Log receives progress (default: discard).
	Log *log.Logger
}

// Comparison is the outcome of Launch.
type Comparison struct {
	Result *metrics.Result
	// Reference is the simulated failure-free no-HA trace (O_e).
	Reference *ha.Trace
	Runs      []RunOutcome
}

// RunOutcome is one real run.
type RunOutcome struct {
	Strategy string
	// Dir holds the run's per-node files.
	Dir string
	// Trace is the merged trace of every node plus the injected faults.
	Trace *ha.Trace
	// Chaos is the chaos report (LaunchConfig.Chaos runs only).
	Chaos *ChaosReport
}

// Note is stated in every cluster result.
const Note = "cluster mode: real OS processes on loopback talking TCP, failures injected with real signals " +
	"(crash = SIGKILL, pause = SIGSTOP/SIGCONT) and a fault layer in the transport; failure detection by memberlist. " +
	"The seed and the fault schedule are recorded and the input tuples are identical to the simulator's, but real " +
	"timing (detection, recovery, latency, message interleaving) is not reproducible from run to run. " +
	"Expected outputs come from the deterministic simulator's failure-free no-HA run; CPU is the node loops' measured busy time, process CPU the node processes' CPU time."

// Launch runs the experiment on real processes for every strategy and
// computes the same result as sim.Compare, with Mode "cluster".
func Launch(ctx context.Context, cfg LaunchConfig) (*Comparison, error) {
	e := cfg.Experiment
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	if cfg.Exe == "" {
		return nil, errors.New("cluster: no node executable")
	}
	if cfg.Insecure {
		cfg.Secret = nil
		cfg.Log.Printf("warning: --insecure: %s", InsecureNote)
	} else if len(cfg.Secret) == 0 {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("cluster: draw a secret for the run: %w", err)
		}
		cfg.Secret = []byte(base64.StdEncoding.EncodeToString(b[:]))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: create output directory: %w", err)
	}
	cfgText, err := yaml.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode experiment: %w", err)
	}
	if _, err := experiment.ParseWith(cfgText, "effective experiment", e.Options()); err != nil {
		return nil, fmt.Errorf("cluster: the effective experiment does not round-trip: %w", err)
	}
	expFile, err := filepath.Abs(filepath.Join(cfg.Out, "experiment.yaml"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(expFile, cfgText, 0o644); err != nil {
		return nil, fmt.Errorf("cluster: write experiment: %w", err)
	}
	if cfg.Reference == nil {
		return nil, errors.New("cluster: LaunchConfig.Reference is required (the expected output)")
	}
	ref, err := cfg.Reference(e)
	if err != nil {
		return nil, err
	}
	res := &metrics.Result{
		Seed: e.Seed, Experiment: e.Name, Mode: "cluster", QueryClass: e.QueryClass().String(),
		Faults: e.FaultDescriptions(), Config: string(cfgText), Note: Note,
	}
	if c := cfg.Chaos; c != nil {
		kinds := c.Kinds
		if len(kinds) == 0 {
			kinds = ChaosKinds
		}
		res.Faults = []string{fmt.Sprintf("chaos: random %s faults within the fault model over %s (seed %d); each run's schedule is in runs[].extra.chaos",
			strings.Join(kinds, "/"), e.Duration.D(), c.Seed)}
	}
	cmp := &Comparison{Result: res, Reference: ref}
	l := &launcher{cfg: cfg, exp: e, expFile: expFile}
	if cfg.Netns {
		if err := NetnsSupported(); err != nil {
			return nil, err
		}
		defer l.labelNetns(res)
	}
	rounds := max(cfg.OverheadRounds, 1)
	if rounds > 1 && !(cfg.Baseline && cfg.FailureFreeOverhead) {
		return nil, errors.New("cluster: repeated overhead rounds need the baseline and the failure-free overhead runs")
	}
	var base *metrics.Overhead
	if cfg.Baseline && rounds == 1 {
		b, err := l.baseline(ctx, "baseline-none")
		if err != nil {
			return nil, err
		}
		res.Baseline = b
		base = &res.Baseline
	}
	for _, name := range cfg.Strategies {
		info, err := strategies.Lookup(name)
		if err != nil {
			return nil, err
		}
		params, err := info.Parse(e.ParamsFor(name))
		if err != nil {
			return nil, err
		}
		spec, err := l.faultsFor(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if spec.chaos != nil {
			cfg.Log.Printf("%s: chaos: %s", name, spec.chaos.Summary())
		} else {
			cfg.Log.Printf("%s: running with faults: %s", name, strings.Join(res.Faults, "; "))
		}
		out, err := l.run(ctx, name, spec, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		tr, dir := out.trace, out.dir
		run := metrics.Run{
			Strategy: name, Params: params.Values(),
			Extra: clusterFigures(tr, e),
		}
		// Recovery is measured against the strategy's own failure-free
		// run when there is one, else against the run's deliveries before
		// the fault, with the real-run tolerance (docs/semantics.md).
		ro := metrics.RecoveryOptions{Real: true}
		if rounds == 1 {
			ffTrace := tr
			if cfg.FailureFreeOverhead {
				cfg.Log.Printf("%s: failure-free run for the overhead", name)
				ff, err := l.run(ctx, name, nil, name+"-failure-free")
				if err != nil {
					return nil, fmt.Errorf("%s (failure-free): %w", name, err)
				}
				ffTrace, ro.Own = ff.trace, ff.trace
			}
			run.Overhead = metrics.OverheadOf(ffTrace, base)
		}
		run.Recovery = metrics.RecoveryWith(ref, tr, ro)
		if at, late := appliedTimes(out.applied); len(at) > 0 {
			// The times the faults were applied, beside the planned ones
			// (res.Faults states the plan): a paused or starved launcher
			// applies them late, and the figures are measured from these.
			run.Extra["faults_applied"] = at
			if late > faultLateWarn {
				cfg.Log.Printf("%s: warning: a fault was applied %s after its planned time (runs[].extra.faults_applied)", name, late.Round(time.Millisecond))
			}
			res.Faults = append(res.Faults, lateFaults(name, at)...)
		}
		if rep := spec.chaos; rep != nil {
			if err := l.finishChaos(rep, name, out, ref, run.Recovery); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			run.Extra["chaos"] = rep
		}
		res.Runs = append(res.Runs, run)
		cmp.Runs = append(cmp.Runs, RunOutcome{Strategy: name, Dir: dir, Trace: tr, Chaos: spec.chaos})
	}
	if rounds > 1 {
		if err := l.overheadRounds(ctx, rounds, res); err != nil {
			return nil, err
		}
	}
	return cmp, nil
}

// baseline runs the no-HA strategy failure-free in directory dir and
// returns its overhead figures, the base of the ratios.
func (l *launcher) baseline(ctx context.Context, dir string) (metrics.Overhead, error) {
	l.cfg.Log.Printf("%s: none, failure-free", dir)
	out, err := l.run(ctx, "none", nil, dir)
	if err != nil {
		return metrics.Overhead{}, fmt.Errorf("baseline run: %w", err)
	}
	b := metrics.OverheadOf(out.trace, nil)
	b.Nodes = nil
	return b, nil
}

// overheadRounds measures the overheads of res.Runs' strategies in rounds
// of the no-HA baseline followed by every strategy failure-free, and sets
// res.Baseline and each run's Overhead to the medians over the rounds.
// Round r's directories are baseline-none-r and <strategy>-failure-free-r.
func (l *launcher) overheadRounds(ctx context.Context, rounds int, res *metrics.Result) error {
	bases := make([]metrics.Overhead, 0, rounds)
	per := make([][]metrics.Overhead, len(res.Runs))
	for r := 1; r <= rounds; r++ {
		l.cfg.Log.Printf("overhead round %d of %d", r, rounds)
		b, err := l.baseline(ctx, fmt.Sprintf("baseline-none-%d", r))
		if err != nil {
			return err
		}
		bases = append(bases, b)
		for i, run := range res.Runs {
			name := run.Strategy
			dir := fmt.Sprintf("%s-failure-free-%d", name, r)
			l.cfg.Log.Printf("%s: failure-free, round %d of %d", name, r, rounds)
			ff, err := l.run(ctx, name, nil, dir)
			if err != nil {
				return fmt.Errorf("%s (failure-free, round %d): %w", name, r, err)
			}
			per[i] = append(per[i], metrics.OverheadOf(ff.trace, &b))
		}
	}
	res.Baseline = metrics.MedianOverhead(bases)
	for i := range res.Runs {
		res.Runs[i].Overhead = metrics.MedianOverhead(per[i])
	}
	return nil
}

// clusterFigures are real-run figures beyond the common metrics: the
// transport's drops (summed over nodes) and the first fragment's
// throughput over the emission period.
func clusterFigures(trace *ha.Trace, e *experiment.Experiment) map[string]any {
	var dropped, faultDropped, first int64
	for _, ev := range trace.Events() {
		switch {
		case ev.Kind == ha.EvNote && strings.HasPrefix(ev.Note, transportNote):
			var ts TransportStats
			if json.Unmarshal([]byte(strings.TrimPrefix(ev.Note, transportNote)), &ts) == nil {
				dropped += ts.Dropped
				faultDropped += ts.FaultDropped
			}
		case ev.Kind == ha.EvStats && ev.Stats != nil && ev.Host == e.Nodes[0].Name:
			first = ev.Stats.Tuples
		}
	}
	x := map[string]any{"transport_dropped": dropped, "fault_dropped": faultDropped}
	if d := e.Duration.D().Seconds(); d > 0 && first > 0 {
		x["first_fragment_tuples_per_s"] = math.Round(float64(first) / d)
	}
	return x
}

type launcher struct {
	cfg     LaunchConfig
	exp     *experiment.Experiment
	expFile string
	// net is the current run's network namespaces (nil: loopback); netem
	// whether the kernel had netem in the last one.
	net   *netnsNet
	netem bool
}

// runOut is what one real run produced.
type runOut struct {
	trace *ha.Trace
	dir   string
	// Chaos runs only: how every process ended, and the orphans left.
	nodes   []NodeExit
	orphans []string
	elapsed time.Duration
	applied []AppliedFault
	end     time.Duration
}

// run performs one real run and returns its merged trace. spec nil is
// a failure-free run.
func (l *launcher) run(ctx context.Context, strategy string, spec *faultSpec, sub string) (*runOut, error) {
	if spec == nil {
		spec = &faultSpec{}
	}
	chaos := spec.chaos != nil
	st, err := strategies.Build(strategy, l.exp.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	topo := l.exp.Topology(st)
	dir, err := filepath.Abs(filepath.Join(l.cfg.Out, sub))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := &runOut{dir: dir, end: l.exp.End()}
	hosts := topo.Hosts()
	startup := l.cfg.Startup
	if startup <= 0 {
		startup = 30 * time.Second
	}
	readyBy := time.Now().Add(startup)
	if l.cfg.Netns {
		closeNet, err := l.openNet(hosts, dir)
		if err != nil {
			return nil, err
		}
		defer closeNet() // after the processes are stopped (deferred next)
	}
	ps := map[string]*proc{}
	defer func() { l.cleanup(ps) }()

	// The sink starts first and is everyone's gossip seed.
	seedHost := topo.Sink
	order := append([]string{seedHost}, slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return h == seedHost })...)
	var seed string
	for i, h := range order {
		var join []string
		if i > 0 {
			join = []string{seed}
		}
		p, err := l.start(h, strategy, dir, join)
		if err != nil {
			return nil, err
		}
		ps[h] = p
		if i == 0 {
			if err := l.waitReady(ctx, p, readyBy); err != nil {
				return nil, err
			}
			seed = p.ready.Gossip
		}
	}
	for _, h := range order[1:] {
		if err := l.waitReady(ctx, ps[h], readyBy); err != nil {
			return nil, err
		}
	}
	if err := l.waitMembership(ctx, ps, len(hosts), readyBy); err != nil {
		return nil, err
	}
	startAt := time.Now().Add(200*time.Millisecond + time.Duration(len(hosts))*10*time.Millisecond)
	if err := l.postAll(ps, "/start", map[string]int64{"at": startAt.UnixNano()}); err != nil {
		return nil, err
	}
	l.cfg.Log.Printf("%s: %d processes ready, start in %s", sub, len(ps), time.Until(startAt).Round(time.Millisecond))

	var evMu sync.Mutex
	var events []ha.Event
	now := func() time.Duration { return time.Since(startAt) }
	ft, err := createFaultTrace(dir)
	if err != nil {
		return nil, err
	}
	defer ft.close()
	record := func(ev ha.Event) {
		ev.T = now()
		evMu.Lock()
		events = append(events, ev)
		ft.write(&ev)
		evMu.Unlock()
	}
	acts := l.schedule(spec.faults, ps, record, chaos)
	end := l.exp.End()
	for _, a := range acts {
		if err := sleepUntil(ctx, startAt.Add(a.at)); err != nil {
			return nil, err
		}
		at := now()
		err := a.do()
		ap := AppliedFault{Planned: a.at, At: at, What: a.what}
		if err != nil {
			ap.Err = err.Error()
			l.cfg.Log.Printf("%s: fault at %s: %v", sub, a.at, err)
		} else if chaos {
			l.cfg.Log.Printf("%s: %s: %s", sub, at.Round(time.Millisecond), a.what)
		}
		out.applied = append(out.applied, ap)
	}
	if err := sleepUntil(ctx, startAt.Add(end)); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.paused && !p.killed {
			_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGCONT)
			p.paused = false
		}
	}
	// Nodes freeze at the end by their own clock and exit after --linger.
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	var failed []string
	for _, h := range order {
		p := ps[h]
		select {
		case <-p.done:
		case <-deadline.C:
			l.cfg.Log.Printf("%s: %s did not exit in time; killing it", sub, h)
			p.forced = true
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.err != nil && !p.killed {
			failed = append(failed, fmt.Sprintf("%s: %v (log %s:\n%s)", h, p.err, p.logPath, tail(p.logPath, 8)))
		}
	}
	if chaos {
		// Everything is stopped; what is left is an orphan.
		l.cleanup(ps)
		for _, h := range order {
			p := ps[h]
			n := NodeExit{Host: h, PID: p.cmd.Process.Pid, Status: "exit status 0", Chaos: p.killed, Forced: p.forced, After: p.exitAt.Sub(startAt)}
			if p.err != nil {
				n.Status = p.err.Error()
			}
			out.nodes = append(out.nodes, n)
			out.elapsed = max(out.elapsed, n.After)
			if syscall.Kill(n.PID, 0) != syscall.ESRCH || syscall.Kill(-n.PID, 0) != syscall.ESRCH {
				out.orphans = append(out.orphans, fmt.Sprintf("%s (pid %d)", h, n.PID))
			}
		}
		for _, f := range failed {
			l.cfg.Log.Printf("%s: node failed: %s", sub, f)
		}
	} else if len(failed) > 0 {
		return nil, fmt.Errorf("node processes failed:\n%s", strings.Join(failed, "\n"))
	}
	var trace []ha.Event
	for _, h := range hosts {
		tr, complete, err := readNodeTrace(dir, h)
		if err != nil && !errors.Is(err, ErrIncompleteTrace) {
			return nil, err
		}
		if p := ps[h]; !complete && p != nil && !p.killed && !p.forced {
			if err == nil {
				err = fmt.Errorf("%s: %w: the node exited without finishing it", PartialTraceFile(dir, h), ErrIncompleteTrace)
			}
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		trace = append(trace, tr...)
	}
	evMu.Lock()
	trace = append(trace, events...)
	evMu.Unlock()
	out.trace = byTime(trace)
	return out, nil
}
