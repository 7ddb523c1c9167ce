package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/cluster"
	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
)

type clusterFlags struct {
	config, strategy, out, secretFile, profile, collect string
	allowLarge                                          bool
	cpuProfileDir                                       string
	seed                                                cliflag.Seed
	duration, startup                                   time.Duration
	json, noBaseline, ffOverhead, quiet, force          bool
	insecure                                            bool
	netns                                               bool
	chaos, chaosWindow                                  time.Duration
	chaosKinds                                          []string
	spares, overheadRounds                              int
}

func newClusterCmd() *cobra.Command {
	var f clusterFlags
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Run one experiment on real processes on this machine, every strategy one after another",
		Long: "cluster launches one 'streamha node' process per host on loopback, runs the experiment with its\n" +
			"fault schedule injected for real (crash = SIGKILL, pause = SIGSTOP/SIGCONT, partition, delay and\n" +
			"loss through each node's transport fault layer), collects the traces, classifies the recovery\n" +
			"against the simulator's failure-free run of the same input, prints the same table as 'run' and\n" +
			"writes result.json (mode \"cluster\") and the traces into --out. Real timing is not reproducible.\n" +
			"With --netns (Linux, root) every host runs in its own network namespace with its own address and\n" +
			"partitions are cut in the network.",
		Example: "  streamha cluster\n  streamha cluster --strategy amnesia,passive-standby --duration 6s\n" +
			"  streamha cluster --strategy active-standby,passive-standby --chaos 60s\n" +
			"  sudo streamha cluster --netns --strategy amnesia,active-standby\n" +
			"  STREAMHA_SECRET=$(head -c 24 /dev/urandom | base64) streamha cluster --strategy amnesia",
		RunE: func(cmd *cobra.Command, _ []string) error { return runCluster(cmd, f) },
	}
	fl := c.Flags()
	cliflag.AddConfig(fl, &f.config, "the built-in experiment")
	fl.BoolVar(&f.allowLarge, "allow-large", false, "check the experiment against the large ranges, for real big runs ('streamha docs experiment', Ranges)")
	cliflag.AddStrategies(fl, &f.strategy, "the file's strategies, else all")
	cliflag.AddSeed(fl, &f.seed, "seed of the run (default: the experiment's)")
	cliflag.AddOut(fl, &f.out, cliflag.OutDir, "", "output directory (default: a new ./streamha-out/<experiment>-<seed>-cluster-<time>/, linked as\n"+
		"streamha-out/latest); refused when it holds an earlier run, unless --force")
	cliflag.AddForce(fl, &f.force, "what --out holds when it is an earlier run (its files are removed first)")
	cliflag.AddJSON(fl, &f.json, "the result (result.json)")
	fl.DurationVar(&f.duration, "duration", 0, "shorten or lengthen the run; fault times scale in proportion (default: the experiment's)")
	fl.DurationVar(&f.startup, "startup", 0, "how long the processes may take to start and see each other before the run fails (default 30s)")
	fl.StringVar(&f.secretFile, "secret-file", "", "cluster secret file (default: $"+cluster.SecretEnv+"; none = a fresh random secret for this run's nodes)")
	fl.BoolVar(&f.insecure, "insecure", false, "run the nodes without a secret: gossip in clear, nothing authenticated (anyone reaching the ports can join, forge messages and control the run)")
	fl.StringVar(&f.profile, "profile", cluster.ProfileTuned, "failure-detector profile: tuned (~0.3–0.5 s), steady (~1 s, tolerates a loaded machine), local or lan (seconds)")
	fl.BoolVar(&f.noBaseline, "no-baseline", false, "skip the failure-free no-HA run (no overhead ratios)")
	fl.BoolVar(&f.ffOverhead, "failure-free-overhead", false, "measure each strategy's overhead in an extra failure-free run (doubles the time)")
	fl.IntVar(&f.overheadRounds, "overhead-rounds", 1, "measure the overhead N times: after the faulty runs, each round runs the no-HA baseline and then every\n"+
		"strategy failure-free, and each overhead figure is the median over the rounds of its ratio to the same round's\n"+
		"baseline, with the cpu× range (implies --failure-free-overhead; single real runs vary by ±20% on a busy machine)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress messages on stderr")
	fl.DurationVar(&f.chaos, "chaos", 0, "chaos run of this length: random kills, pauses and partitions within the fault model replace the\n"+
		"experiment's faults (drawn from --seed), then the chaos invariants are checked; exit status 1 if one fails ('streamha docs chaos')")
	fl.StringSliceVar(&f.chaosKinds, "chaos-kinds", nil, "fault kinds --chaos draws: kill, pause, partition (default all)")
	fl.DurationVar(&f.chaosWindow, "chaos-window", 0, "recovery window between chaos faults (default by --profile: tuned 2.5s, steady 4s, local/lan 10s)")
	fl.IntVar(&f.spares, "spares", -1, "spare hosts per fragment (default: the experiment's; --chaos raises it to at least 3)")
	fl.StringVar(&f.cpuProfileDir, "cpuprofile-dir", "", "every node writes a Go CPU profile of its run to DIR/<run>/<host>.cpu.pprof (node --cpuprofile; read with 'go tool pprof')")
	fl.BoolVar(&f.netns, "netns", false, "every host in its own Linux network namespace on a bridge, partitions cut in the network\n"+
		"(Linux, root; 'streamha docs cluster', Network namespaces)")
	fl.StringVar(&f.collect, "collect", "", "launch nothing: compute the result of one strategy from node traces (<host>.trace.jsonl) gathered in this directory (multi-host runs)")
	return c
}

// scaleDuration sets the experiment's duration to d and moves every fault
// in proportion (durations of pauses and partitions are kept).
func scaleDuration(e *experiment.Experiment, d time.Duration) error {
	if d <= 0 {
		return usage("--duration: must be positive, got %s", d)
	}
	old := e.Duration.D()
	e.Duration = experiment.Duration(d)
	for i := range e.Faults {
		e.Faults[i].At = experiment.Duration(time.Duration(float64(e.Faults[i].At.D()) * float64(d) / float64(old)).Round(time.Millisecond))
	}
	return e.Validate()
}

func runCluster(cmd *cobra.Command, f clusterFlags) error {
	e, err := loadExperiment(f.config, f.seed.Value(), f.allowLarge)
	if err != nil {
		return err
	}
	if f.duration != 0 {
		if f.chaos != 0 {
			return usage("--duration and --chaos both set the run's length: give one")
		}
		if err := scaleDuration(e, f.duration); err != nil {
			return err
		}
	}
	var chaos *cluster.ChaosConfig
	if f.chaos != 0 {
		if chaos, err = chaosConfig(e, f); err != nil {
			return err
		}
	} else if len(f.chaosKinds) > 0 || f.chaosWindow != 0 {
		return usage("--chaos-kinds and --chaos-window need --chaos")
	}
	if f.spares >= 0 {
		e.Spares = &f.spares
		if err := e.Validate(); err != nil {
			return usage("--spares: %w", err)
		}
	}
	names, err := strategyNames(f.strategy, e)
	if err != nil {
		return err
	}
	switch {
	case f.overheadRounds < 1:
		return usage("--overhead-rounds: must be at least 1, got %d", f.overheadRounds)
	case f.overheadRounds > 1 && f.noBaseline:
		return usage("--overhead-rounds: the rounds measure against the no-HA baseline; drop --no-baseline")
	case f.overheadRounds > 1 && f.collect != "":
		return usage("--overhead-rounds: --collect launches no runs to repeat")
	case f.overheadRounds > 1:
		f.ffOverhead = true
	}
	if f.netns {
		if f.collect != "" {
			return usage("--netns: --collect launches no runs")
		}
		if err := cluster.NetnsSupported(); err != nil {
			return usageErr{err}
		}
	}
	if f.collect != "" {
		if len(names) != 1 {
			return usage("--collect: name exactly one --strategy (the one the nodes ran)")
		}
		cmp, err := cluster.Collect(e, names[0], f.collect, sim.ReferenceTrace)
		if err != nil {
			return err
		}
		return printCluster(cmd, f, e, f.collect, cmp)
	}
	secret, err := cluster.LoadSecret(f.secretFile)
	if err != nil {
		return usageErr{err}
	}
	if f.insecure && len(secret) > 0 {
		return usage("--insecure: a cluster secret is set ($%s or --secret-file); drop one of them", cluster.SecretEnv)
	}
	if _, err := cluster.MemberlistConfig(f.profile); err != nil {
		return usage("--profile: %w", err)
	}
	if d := f.cpuProfileDir; d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return usage("--cpuprofile-dir: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cluster: find own executable: %w", err)
	}
	id, err := newRunIdentity("cluster", e, names, clusterCommand(f, e))
	if err != nil {
		return err
	}
	dir, err := prepareOutDir(outDirOptions{
		Out: f.out, Base: fmt.Sprintf("%s-%d-cluster", e.Name, e.Seed), Force: f.force, Now: time.Now(),
	}, id)
	if err != nil {
		return err
	}
	logw := cmd.ErrOrStderr()
	lg := log.New(logw, "cluster: ", log.Ltime)
	if f.quiet {
		lg = nil
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmp, err := cluster.Launch(ctx, cluster.LaunchConfig{
		Reference:  sim.ReferenceTrace,
		Experiment: e, Strategies: names, Exe: exe, Args: []string{"node"}, Out: dir,
		Secret: secret, Insecure: f.insecure, Profile: f.profile, Startup: f.startup, Baseline: !f.noBaseline,
		FailureFreeOverhead: f.ffOverhead, OverheadRounds: f.overheadRounds, Chaos: chaos, Log: lg, CPUProfileDir: f.cpuProfileDir,
		Netns: f.netns,
	})
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: every node process was stopped; the partial traces are kept in %s", errInterrupted, dir)
	}
	if err != nil {
		return err
	}
	return printCluster(cmd, f, e, dir, cmp)
}

func printCluster(cmd *cobra.Command, f clusterFlags, e *experiment.Experiment, dir string, cmp *cluster.Comparison) error {
	cmp.Result.Command = clusterCommand(f, e)
	if err := writeClusterDir(dir, cmp); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cmp.Result); err != nil {
			return err
		}
		return printChaos(cmd.ErrOrStderr(), cmp)
	}
	if err := reports.Table(out, cmp.Result); err != nil {
		return err
	}
	reports.Explanations(out, cmp.Result, 5)
	fmt.Fprintf(out, "\n%s\nresults written to %s\n", cmp.Result.Note, dir)
	return printChaos(out, cmp)
}

// chaosConfig sets up a chaos run: the run lasts --chaos, the
// experiment's own faults are replaced, and every fragment gets at least 3
// spares unless --spares says otherwise.
func chaosConfig(e *experiment.Experiment, f clusterFlags) (*cluster.ChaosConfig, error) {
	if f.chaos < 0 {
		return nil, usage("--chaos: must be positive, got %s", f.chaos)
	}
	if f.chaosWindow < 0 {
		return nil, usage("--chaos-window: must be positive, got %s", f.chaosWindow)
	}
	for _, k := range f.chaosKinds {
		if !slices.Contains(cluster.ChaosKinds, k) {
			return nil, usage("--chaos-kinds: unknown kind %q (want %s)", k, strings.Join(cluster.ChaosKinds, ", "))
		}
	}
	e.Duration = experiment.Duration(f.chaos)
	e.Faults = nil
	if f.spares < 0 && *e.Spares < 3 {
		three := 3
		e.Spares = &three
	}
	if err := e.Validate(); err != nil {
		return nil, usage("--chaos: %w", err)
	}
	return &cluster.ChaosConfig{Seed: e.Seed, Kinds: f.chaosKinds, Window: f.chaosWindow, Profile: f.profile}, nil
}

// printChaos prints the chaos verdicts of every run and fails when an
// invariant failed.
func printChaos(out io.Writer, cmp *cluster.Comparison) error {
	var failed []string
	for _, r := range cmp.Runs {
		c := r.Chaos
		if c == nil {
			continue
		}
		fmt.Fprintf(out, "\nchaos invariants — %s: %s\n", c.Strategy, c.Summary())
		for _, v := range c.Verdicts {
			fmt.Fprintf(out, "  %-4s  %-14s %s\n", v.Status, v.Invariant, v.Evidence)
		}
		fmt.Fprintf(out, "  schedule and verdicts: %s\n", filepath.Join(r.Dir, "chaos.json"))
		for _, inv := range c.Failed() {
			failed = append(failed, c.Strategy+": "+inv)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("chaos: %d invariant(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

func clusterCommand(f clusterFlags, e *experiment.Experiment) string {
	parts := []string{"streamha cluster"}
	if f.config != "" {
		parts = append(parts, "--config", f.config)
	}
	if f.strategy != "" {
		parts = append(parts, "--strategy", f.strategy)
	}
	if f.duration != 0 {
		parts = append(parts, "--duration", f.duration.String())
	}
	if f.chaos != 0 {
		parts = append(parts, "--chaos", f.chaos.String())
		if len(f.chaosKinds) > 0 {
			parts = append(parts, "--chaos-kinds", strings.Join(f.chaosKinds, ","))
		}
		if f.chaosWindow != 0 {
			parts = append(parts, "--chaos-window", f.chaosWindow.String())
		}
	}
	if f.spares >= 0 {
		parts = append(parts, "--spares", fmt.Sprint(f.spares))
	}
	if f.profile != cluster.ProfileTuned {
		parts = append(parts, "--profile", f.profile)
	}
	if f.insecure {
		parts = append(parts, "--insecure")
	}
	if f.netns {
		parts = append(parts, "--netns")
	}
	switch {
	case f.noBaseline:
		parts = append(parts, "--no-baseline")
	case f.overheadRounds > 1:
		parts = append(parts, "--overhead-rounds", fmt.Sprint(f.overheadRounds))
	}
	if f.ffOverhead && f.overheadRounds <= 1 {
		parts = append(parts, "--failure-free-overhead")
	}
	parts = append(parts, "--seed", fmt.Sprint(e.Seed))
	return strings.Join(parts, " ")
}

func writeClusterDir(dir string, cmp *cluster.Comparison) error {
	traces := make([]*ha.Trace, len(cmp.Runs))
	for i, r := range cmp.Runs {
		traces[i] = r.Trace
	}
	return reports.WriteRunDir(dir, cmp.Result, cmp.Reference, traces)
}

// clusterThroughput measures end-to-end throughput on loopback for
// `streamha bench`: the default query without HA (5 processes), 1 M
// tuples/s offered for max(1 s, n / 1 M) seconds. It returns the tuples per
// second the first fragment processed, and fails when the run fell behind
// (windows missing at the end).
func clusterThroughput(ctx context.Context, n int) (float64, error) {
	exe, err := nodeExe("cluster throughput")
	if err != nil {
		return 0, err
	}
	const rate = 1e6
	e := dataPlaneExperiment("bench-cluster", rate, max(time.Second, time.Duration(float64(n)/rate*float64(time.Second))))
	dir, err := os.MkdirTemp("", "streamha-bench-cluster-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cmp, err := cluster.Launch(ctx, cluster.LaunchConfig{
		Reference:  sim.ReferenceTrace,
		Experiment: e, Strategies: []string{"none"}, Exe: exe, Args: []string{"node"}, Out: dir,
		// The throughput figure is the data plane's without frame tags, as
		// docs/benchmarks.md states; nodes on loopback for one second.
		Insecure: true,
	})
	if err != nil {
		return 0, err
	}
	run := cmp.Result.Runs[0]
	if run.Recovery.Missing > 0 {
		return 0, fmt.Errorf("cluster throughput: the run fell behind at %g tuples/s offered (%d outputs missing)", e.Source.Rate, run.Recovery.Missing)
	}
	r, _ := run.Extra["first_fragment_tuples_per_s"].(float64)
	return r, nil
}

// dataPlaneExperiment is the default query at rate tuples/s for d, with
// no spares and no faults, and a CPU model fast enough that the simulated
// reference keeps up: the load of the cluster throughput and data-plane
// overhead benchmarks, where the nodes' work is the tuples rather than
// waking up for them.
func dataPlaneExperiment(name string, rate float64, d time.Duration) *experiment.Experiment {
	e := experiment.Default()
	e.SetOptions(benchLimits)
	zero := 0
	e.Name, e.Spares, e.Faults = name, &zero, nil
	e.Source.Rate = rate
	e.Duration = experiment.Duration(d)
	e.Drain = experiment.Duration(time.Second)
	e.CPU = experiment.CPUConfig{PerOp: experiment.Duration(10), PerByte: experiment.Duration(1), PerEvent: experiment.Duration(10)}
	return e
}

// nodeExe is this executable, which the bench's cluster measurements
// launch as `streamha node`; what names the measurement for the error.
func nodeExe(what string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(exe, ".test") {
		return "", fmt.Errorf("%s needs the streamha binary, not a test binary", what)
	}
	return exe, nil
}

// clusterOverhead runs experiment e on real processes for the named
// strategies with the overhead measured in rounds paired with the no-HA
// baseline (cluster --overhead-rounds).
func clusterOverhead(ctx context.Context, e *experiment.Experiment, rounds int, names []string) (*metrics.Result, error) {
	exe, err := nodeExe("cluster overhead")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "streamha-bench-overhead-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cmp, err := cluster.Launch(ctx, cluster.LaunchConfig{
		Reference:  sim.ReferenceTrace,
		Experiment: e, Strategies: names, Exe: exe, Args: []string{"node"}, Out: dir,
		Baseline: true, FailureFreeOverhead: true, OverheadRounds: rounds,
		// The overhead ratios in docs/benchmarks.md are measured without
		// frame tags (both sides of each ratio alike).
		Insecure: true,
	})
	if err != nil {
		return nil, err
	}
	return cmp.Result, nil
}
