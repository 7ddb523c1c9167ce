package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// LaunchConfig configures `streamha cluster`: one experiment run on real
// processes on this machine, once per strategy.
type LaunchConfig struct {
	Experiment *sim.Experiment
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
	Secret []byte
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
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: create output directory: %w", err)
	}
	cfgText, err := yaml.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode experiment: %w", err)
	}
	if _, err := sim.ParseWith(cfgText, "effective experiment", e.Options()); err != nil {
		return nil, fmt.Errorf("cluster: the effective experiment does not round-trip: %w", err)
	}
	expFile, err := filepath.Abs(filepath.Join(cfg.Out, "experiment.yaml"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(expFile, cfgText, 0o644); err != nil {
		return nil, fmt.Errorf("cluster: write experiment: %w", err)
	}
	_, ref, err := e.Reference()
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
	cmp := &Comparison{Result: res, Reference: ref.Trace}
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
			Recovery: metrics.RecoveryOf(ref.Trace, tr),
			Extra:    clusterFigures(tr, e),
		}
		if rounds == 1 {
			ffTrace := tr
			if cfg.FailureFreeOverhead {
				cfg.Log.Printf("%s: failure-free run for the overhead", name)
				ff, err := l.run(ctx, name, nil, name+"-failure-free")
				if err != nil {
					return nil, fmt.Errorf("%s (failure-free): %w", name, err)
				}
				ffTrace = ff.trace
			}
			run.Overhead = metrics.OverheadOf(ffTrace, base)
		}
		if rep := spec.chaos; rep != nil {
			if err := l.finishChaos(rep, name, out, ref.Trace, run.Recovery); err != nil {
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
func clusterFigures(trace *ha.Trace, e *sim.Experiment) map[string]any {
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
	exp     *sim.Experiment
	expFile string
	// net is the current run's network namespaces (nil: loopback); netem
	// whether the kernel had netem in the last one.
	net   *netnsNet
	netem bool
}

type proc struct {
	host    string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	exitAt  time.Time
	ready   Ready
	killed  bool // SIGKILLed by the fault schedule
	forced  bool // SIGKILLed by the launcher at the end-of-run deadline
	paused  bool
	logPath string
}

// action is one step of the fault schedule.
type action struct {
	at   time.Duration
	what string
	do   func() error
}

// faultSpec is the fault schedule of one run; the zero value (or nil) is
// a failure-free run.
type faultSpec struct {
	faults []sim.Fault
	// chaos is the chaos report being built (chaos runs only).
	chaos *ChaosReport
}

// faultsFor returns the fault schedule of strategy's run: the
// experiment's, or a chaos plan for the strategy's topology.
func (l *launcher) faultsFor(strategy string) (*faultSpec, error) {
	st, err := strategies.Build(strategy, l.exp.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	simCfg, err := l.exp.SimConfig(st, false)
	if err != nil {
		return nil, err
	}
	c := l.cfg.Chaos
	if c == nil {
		return &faultSpec{faults: simCfg.Faults}, nil
	}
	cc := *c
	if cc.Profile == "" {
		cc.Profile = l.cfg.Profile
	}
	tm, err := timingFor(cc.Profile)
	if err != nil {
		return nil, err
	}
	if cc.Window <= 0 {
		cc.Window = tm.window
	}
	plan, err := PlanChaos(simCfg.Topology, st.Replicas(), l.exp.Duration.D(), cc)
	if err != nil {
		return nil, err
	}
	rep := &ChaosReport{Strategy: strategy, Seed: cc.Seed, Duration: l.exp.Duration.D(), Window: cc.Window, Plan: plan}
	return &faultSpec{faults: simFaults(plan), chaos: rep}, nil
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

// finishChaos completes a chaos report from the run and checks it.
func (l *launcher) finishChaos(rep *ChaosReport, strategy string, out *runOut, ref *ha.Trace, rec metrics.Recovery) error {
	st, err := strategies.Build(strategy, l.exp.ParamsFor(strategy))
	if err != nil {
		return err
	}
	rep.Applied, rep.Nodes, rep.Orphans, rep.Elapsed = out.applied, out.nodes, out.orphans, out.elapsed
	rep.Bound = out.end + DefaultLinger + ChaosExitSlack
	rep.check(chaosInput{
		exp: l.exp, topo: l.exp.Topology(st), replicas: st.Replicas(), params: l.exp.ParamsFor(strategy),
		ref: ref, trace: out.trace, rec: rec,
	})
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out.dir, "chaos.json"), b, 0o644)
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
	simCfg, err := l.exp.SimConfig(st, true)
	if err != nil {
		return nil, err
	}
	topo := simCfg.Topology
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
	out := &runOut{dir: dir, end: simCfg.End}
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
	end := simCfg.End
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
		tr, err := ReadTraceTolerant(TraceFileOf(dir, h))
		if err != nil {
			return nil, err
		}
		trace = append(trace, tr...)
	}
	evMu.Lock()
	trace = append(trace, events...)
	evMu.Unlock()
	out.trace = byTime(trace)
	return out, nil
}

// byTime merges the events of several nodes (and the launcher's own) into
// one trace, in time order; events of equal time keep their order.
func byTime(events []ha.Event) *ha.Trace {
	sort.SliceStable(events, func(i, j int) bool { return events[i].T < events[j].T })
	return ha.NewTrace(events...)
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start launches host's process in its own process group, with its log in dir.
func (l *launcher) start(host, strategy, dir string, join []string) (*proc, error) {
	args := append(slices.Clone(l.cfg.Args),
		"--config", l.expFile, "--strategy", strategy, "--seed", strconv.FormatUint(l.exp.Seed, 10),
		"--host", host, "--out", dir, "--await-start",
	)
	args = append(args, l.addrFlags(host)...)
	if l.cfg.Profile != "" {
		args = append(args, "--profile", l.cfg.Profile)
	}
	if l.exp.Options().AllowLarge {
		args = append(args, "--allow-large")
	}
	for _, j := range join {
		args = append(args, "--join", j)
	}
	if pd := l.cfg.CPUProfileDir; pd != "" {
		pd, err := filepath.Abs(filepath.Join(pd, filepath.Base(dir)))
		if err != nil {
			return nil, fmt.Errorf("start node %s: profile directory: %w", host, err)
		}
		if err := os.MkdirAll(pd, 0o755); err != nil {
			return nil, fmt.Errorf("start node %s: profile directory: %w", host, err)
		}
		args = append(args, "--cpuprofile", filepath.Join(pd, host+".cpu.pprof"))
	}
	logPath := filepath.Join(dir, host+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	exe, args := l.command(host, args)
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), l.cfg.Env...)
	cmd.Env = slices.DeleteFunc(cmd.Env, func(s string) bool { return strings.HasPrefix(s, SecretEnv+"=") })
	if len(l.cfg.Secret) > 0 {
		cmd.Env = append(cmd.Env, SecretEnv+"="+string(l.cfg.Secret))
	}
	// Own process group: Ctrl-C reaches only the launcher, which stops the
	// children in order; Pdeathsig kills a child if the launcher dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start node %s: %w", host, err)
	}
	p := &proc{host: host, cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() {
		p.err = cmd.Wait()
		p.exitAt = time.Now()
		lf.Close()
		close(p.done)
	}()
	return p, nil
}

func (l *launcher) waitReady(ctx context.Context, p *proc, by time.Time) error {
	path := ReadyFile(filepath.Dir(p.logPath), p.host)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if err := json.Unmarshal(b, &p.ready); err != nil {
				return fmt.Errorf("node %s: ready file: %w", p.host, err)
			}
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("node %s exited during startup: %v\n%s", p.host, p.err, tail(p.logPath, 10))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(by) {
			return fmt.Errorf("node %s not ready in time (raise --startup); its log:\n%s", p.host, tail(p.logPath, 10))
		}
	}
}

// cleanup stops every process still running: SIGCONT first for paused
// ones, then SIGTERM, then SIGKILL after 2 s. No orphan is left behind.
func (l *launcher) cleanup(ps map[string]*proc) {
	var live []*proc
	for _, p := range ps {
		select {
		case <-p.done:
			continue
		default:
		}
		live = append(live, p)
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGCONT)
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
	if len(live) == 0 {
		return
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for _, p := range live {
		select {
		case <-p.done:
		case <-t.C:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	for _, p := range live {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
}

// schedule turns the fault list into timed actions. With stall,
// partitions stall links (FaultRules.Stall) instead of dropping messages.
func (l *launcher) schedule(faults []sim.Fault, ps map[string]*proc, record func(ha.Event), stall bool) []action {
	var acts []action
	rules := map[string]*activeRules{}
	for h := range ps {
		rules[h] = &activeRules{}
	}
	add := func(at time.Duration, what string, do func() error) {
		acts = append(acts, action{at: at, what: what, do: do})
	}
	signal := func(h string, sig syscall.Signal) error {
		p := ps[h]
		if p == nil {
			return fmt.Errorf("no process for %s", h)
		}
		return syscall.Kill(p.cmd.Process.Pid, sig)
	}
	for i, f := range faults {
		switch f.Kind {
		case sim.FaultCrash:
			add(f.At, "kill "+f.Host, func() error {
				p := ps[f.Host]
				if p == nil || p.killed {
					return nil
				}
				p.killed = true
				record(ha.Event{Kind: ha.EvCrash, Host: f.Host})
				return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			})
		case sim.FaultPause:
			add(f.At, fmt.Sprintf("pause %s for %s", f.Host, f.For), func() error {
				p := ps[f.Host]
				if p == nil || p.killed || p.paused {
					return nil
				}
				p.paused = true
				record(ha.Event{Kind: ha.EvPause, Host: f.Host, N: int64(f.For)})
				return signal(f.Host, syscall.SIGSTOP)
			})
			add(f.At+f.For, "resume "+f.Host, func() error {
				p := ps[f.Host]
				if p == nil || p.killed || !p.paused {
					return nil
				}
				p.paused = false
				record(ha.Event{Kind: ha.EvResume, Host: f.Host})
				return signal(f.Host, syscall.SIGCONT)
			})
		case sim.FaultPartition, sim.FaultDelay, sim.FaultLoss:
			if f.Kind == sim.FaultPartition && l.net != nil {
				acts = append(acts, l.netPartition(i, f, record)...)
				continue
			}
			affected := map[string]FaultRules{}
			switch f.Kind {
			case sim.FaultPartition:
				for gi, g := range f.Groups {
					for _, h := range g {
						var block []string
						for gj, o := range f.Groups {
							if gj != gi {
								block = append(block, o...)
							}
						}
						if stall {
							affected[h] = FaultRules{Stall: block}
						} else {
							affected[h] = FaultRules{Block: block}
						}
					}
				}
			case sim.FaultDelay:
				for _, h := range fromHosts(f.From, ps) {
					affected[h] = FaultRules{Delay: []LinkDelay{{To: f.To, Extra: f.Delay}}}
				}
			case sim.FaultLoss:
				for _, h := range fromHosts(f.From, ps) {
					affected[h] = FaultRules{Loss: []LinkLoss{{To: f.To, P: f.Loss}}}
				}
			}
			apply := func(on bool) error {
				var errs []error
				for _, h := range sortedHosts(affected) {
					ar := rules[h]
					if ar == nil {
						continue
					}
					if on {
						ar.add(i, affected[h])
					} else {
						ar.remove(i)
					}
					if err := l.postFaults(ps[h], ar.merged()); err != nil {
						errs = append(errs, err)
					}
				}
				return errors.Join(errs...)
			}
			what := fmt.Sprintf("%s %v", f.Kind, f.Groups)
			if f.Kind != sim.FaultPartition {
				what = fmt.Sprintf("%s %s→%s", f.Kind, f.From, f.To)
			}
			add(f.At, what, func() error {
				if f.Kind == sim.FaultPartition {
					record(ha.Event{Kind: ha.EvPartition, Note: fmt.Sprint(f.Groups)})
				}
				return apply(true)
			})
			add(f.At+f.For, "end of "+what, func() error {
				if f.Kind == sim.FaultPartition {
					record(ha.Event{Kind: ha.EvHeal, Note: fmt.Sprint(f.Groups)})
				}
				return apply(false)
			})
		}
	}
	sort.SliceStable(acts, func(a, b int) bool { return acts[a].at < acts[b].at })
	return acts
}

func fromHosts(from string, ps map[string]*proc) []string {
	if from != "" {
		return []string{from}
	}
	return sortedHosts(ps)
}

func sortedHosts[V any](m map[string]V) []string {
	hs := make([]string, 0, len(m))
	for h := range m {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}

// activeRules merges the rules of every fault in force on one host.
type activeRules struct {
	ids   []int
	rules []FaultRules
}

func (a *activeRules) add(id int, r FaultRules) {
	a.ids = append(a.ids, id)
	a.rules = append(a.rules, r)
}

func (a *activeRules) remove(id int) {
	if i := slices.Index(a.ids, id); i >= 0 {
		a.ids = slices.Delete(a.ids, i, i+1)
		a.rules = slices.Delete(a.rules, i, i+1)
	}
}

func (a *activeRules) merged() FaultRules {
	var m FaultRules
	for _, r := range a.rules {
		m.Block = append(m.Block, r.Block...)
		m.Stall = append(m.Stall, r.Stall...)
		m.Delay = append(m.Delay, r.Delay...)
		m.Loss = append(m.Loss, r.Loss...)
	}
	return m
}

// postFaults sends rules to a node's control endpoint.
func (l *launcher) postFaults(p *proc, r FaultRules) error {
	if p == nil || p.killed {
		return nil
	}
	return l.post(p, "/fault", r)
}

// post sends a JSON body to a node's control endpoint.
func (l *launcher) post(p *proc, path string, body any) error {
	if p.ready.Metrics == "" {
		return fmt.Errorf("%s: no control endpoint", p.host)
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, "http://"+p.ready.Metrics+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	signRequest(req, DeriveKeys(l.cfg.Secret), b, time.Now())
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s to %s: %w", path, p.host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("POST %s to %s: %s: %s", path, p.host, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// postAll posts the same body to every node concurrently.
func (l *launcher) postAll(ps map[string]*proc, path string, body any) error {
	var wg sync.WaitGroup
	errs := make([]error, 0, len(ps))
	var mu sync.Mutex
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.post(p, path, body); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitMembership waits until every node sees all n hosts as members.
func (l *launcher) waitMembership(ctx context.Context, ps map[string]*proc, n int, by time.Time) error {
	c := http.Client{Timeout: time.Second}
	keys := DeriveKeys(l.cfg.Secret)
	for _, h := range sortedHosts(ps) {
		p := ps[h]
		for {
			var hz struct {
				Members []string `json:"members"`
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.ready.Metrics+"/members", nil)
			if err != nil {
				return err
			}
			signRequest(req, keys, nil, time.Now())
			resp, err := c.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				err = fmt.Errorf("GET /members: %s", resp.Status)
			}
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&hz)
				resp.Body.Close()
			}
			if err == nil && len(hz.Members) >= n {
				break
			}
			if time.Now().After(by) {
				return fmt.Errorf("node %s sees %d of %d members (raise --startup): %v; its log:\n%s", h, len(hz.Members), n, err, tail(p.logPath, 10))
			}
			if err := sleepUntil(ctx, time.Now().Add(10*time.Millisecond)); err != nil {
				return err
			}
		}
	}
	return nil
}

// tail returns the last n lines of a log file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// ReadTraceTolerant reads a node's JSONL trace. A process killed with
// SIGKILL may leave a partial last line; it is ignored. A missing file is
// an empty trace only if the node never got to create it.
func ReadTraceTolerant(path string) ([]ha.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []ha.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var pendingErr error
	var scratch ha.Tuple
	for sc.Scan() {
		if pendingErr != nil {
			return nil, pendingErr
		}
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		e, err := ha.UnmarshalEventLine(line, &scratch)
		if err != nil {
			// Only the last line may be partial.
			pendingErr = fmt.Errorf("%s: %w", path, err)
			continue
		}
		if e.Tuple == &scratch { // the events are kept: each its own tuple
			t := scratch
			e.Tuple = &t
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Collect computes the result of a run whose nodes were started by hand
// (multi-host: docker compose, Kubernetes) from the node traces gathered
// into dir (<host>.trace.jsonl), with the faults `streamha cluster` traced
// into FaultTraceFile(dir) when it is there. Faults injected by hand are in
// no trace, so detection and recovery times are then left out; the
// recovery type and counts are computed as usual.
func Collect(e *sim.Experiment, strategy, dir string) (*Comparison, error) {
	st, err := strategies.Build(strategy, e.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	_, ref, err := e.Reference()
	if err != nil {
		return nil, err
	}
	var events []ha.Event
	found := 0
	for _, h := range e.Topology(st).Hosts() {
		tr, err := ReadTraceTolerant(TraceFileOf(dir, h))
		if err != nil {
			return nil, err
		}
		if tr != nil {
			found++
		}
		events = append(events, tr...)
	}
	if found == 0 {
		return nil, fmt.Errorf("collect: no <host>.trace.jsonl of strategy %s in %s", strategy, dir)
	}
	faults, err := readFaultTrace(dir)
	if err != nil {
		return nil, err
	}
	trace := byTime(append(events, faults...))
	cfgText, _ := yaml.Marshal(e)
	params, _ := strategies.Lookup(strategy)
	p, err := params.Parse(e.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	res := &metrics.Result{
		Seed: e.Seed, Experiment: e.Name, Mode: "cluster", QueryClass: e.QueryClass().String(),
		Faults: e.FaultDescriptions(), Config: string(cfgText),
		Note: collectNote(found, dir, len(faults)),
	}
	run := metrics.Run{
		Strategy: strategy, Params: p.Values(),
		Recovery: metrics.RecoveryOf(ref.Trace, trace),
		Overhead: metrics.OverheadOf(trace, nil),
		Extra:    clusterFigures(trace, e),
	}
	res.Runs = append(res.Runs, run)
	return &Comparison{Result: res, Reference: ref.Trace, Runs: []RunOutcome{{Strategy: strategy, Dir: dir, Trace: trace}}}, nil
}
