package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
)

func init() { extraCommands = append(extraCommands, newChainSweepCmd) }

type chainFlags struct {
	fragments string
	keys      int
	rate      float64
	perByte   time.Duration
	interval  time.Duration
	seeds     int
	out       string
	noOut     bool
	quiet     bool
}

func newChainSweepCmd() *cobra.Command {
	var f chainFlags
	c := &cobra.Command{
		Use:   "chain-sweep",
		Short: "Recovery time of global rollback and passive standby as the chain grows",
		Long: "chain-sweep runs a chain of N fragments, each a per-key running sum over --keys keys (so every\n" +
			"fragment holds state), for every N in --fragments, crashes the middle fragment, and prints the\n" +
			"restart time (crash → every restarted fragment caught up) and the recovery time of global-checkpoint (every fragment restarts from the last completed checkpoint)\n" +
			"and passive-standby (the failed fragment alone restarts), each beside its model. It says on stderr\n" +
			"which chain and seed runs, and writes a report (report.html, report.md, chain-sweep.png/.svg,\n" +
			"chain-sweep.csv, chain-sweep.json) into a new directory under streamha-out (linked as\n" +
			"streamha-out/latest-chain-sweep), or into --out; 'streamha serve' lists and compares them.",
		Example: "  streamha chain-sweep\n  streamha chain-sweep --fragments 3,6,12 --keys 50000 --out docs/img",
		RunE: func(cmd *cobra.Command, _ []string) error {
			progress := cmd.ErrOrStderr()
			if f.quiet {
				progress = io.Discard
			}
			return runChainSweep(cmd.OutOrStdout(), progress, f, chainCommand(cmd))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.fragments, "fragments", "3,4,6,8,10,12", "chain lengths to run (comma-separated, 2 to 32)")
	fl.IntVar(&f.keys, "keys", 25000, "keys of the source; a fragment's state holds one entry per key seen (1 to 1000000)")
	fl.Float64Var(&f.rate, "rate", 5000, "source rate, tuples/s (1 to 100000)")
	fl.DurationVar(&f.perByte, "per-byte", 200*time.Nanosecond, "CPU per byte serialised, read or deserialised (200ns: a checkpoint store read at 5 MB/s)")
	fl.DurationVar(&f.interval, "interval", time.Second, "checkpoint interval of both strategies")
	fl.IntVar(&f.seeds, "seeds", 3, "seeds per chain length (1 to 20); the table shows the means")
	cliflag.AddOut(fl, &f.out, cliflag.OutDir, "", "directory for the report (default: a new ./streamha-out/chain-sweep-<time>/)")
	fl.BoolVar(&f.noOut, "no-out", false, "write no files: the table only")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress messages on stderr")
	return c
}

// chainCommand is the command line that reproduces a chain sweep: its
// name and the flags given, --out and --quiet left out.
func chainCommand(cmd *cobra.Command) string {
	parts := []string{"streamha", "chain-sweep"}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name != "out" && fl.Name != "quiet" && fl.Name != "no-out" {
			parts = append(parts, "--"+fl.Name, fl.Value.String())
		}
	})
	return strings.Join(parts, " ")
}

// chainPoint is one chain length's measured and modelled recovery, in ms.
type chainPoint = reports.ChainPoint

// addChain adds w × q's figures to p (a running mean).
func addChain(p *chainPoint, q chainPoint, w float64) {
	p.GCRestartMs += w * q.GCRestartMs
	p.GCModelMs += w * q.GCModelMs
	p.GCRecoveryMs += w * q.GCRecoveryMs
	p.PSRestartMs += w * q.PSRestartMs
	p.PSModelMs += w * q.PSModelMs
	p.PSRecoveryMs += w * q.PSRecoveryMs
}

// restartMs is metrics.Restart in ms, -1 when the trace has none.
func restartMs(tr *ha.Trace) float64 {
	d, _, _, ok := metrics.Restart(tr)
	if !ok {
		return -1
	}
	return float64(d) / float64(time.Millisecond)
}

func runChainSweep(w, progress io.Writer, f chainFlags, command string) error {
	var ns []int
	for _, s := range strings.Split(f.fragments, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 || n > 32 {
			return usageErr{fmt.Errorf("--fragments: want chain lengths from 2 to 32, got %q", s)}
		}
		ns = append(ns, n)
	}
	if f.keys < 1 || f.keys > 1_000_000 {
		return usageErr{fmt.Errorf("--keys: want 1 to 1000000, got %d", f.keys)}
	}
	if f.rate < 1 || f.rate > 100000 {
		return usageErr{fmt.Errorf("--rate: want 1 to 100000, got %g", f.rate)}
	}
	if f.perByte < 0 || f.perByte > time.Microsecond {
		return usageErr{fmt.Errorf("--per-byte: want 0 to 1us, got %s", f.perByte)}
	}
	if f.seeds < 1 || f.seeds > 20 {
		return usageErr{fmt.Errorf("--seeds: want 1 to 20, got %d", f.seeds)}
	}
	if f.interval < time.Millisecond {
		return usageErr{fmt.Errorf("--interval: want at least 1ms, got %s", f.interval)}
	}
	setup := fmt.Sprintf("chain of running sums, %g tuples/s over %d keys, %s per byte, crash of the middle fragment, checkpoint interval %s, mean of %d seeds",
		f.rate, f.keys, f.perByte, f.interval, f.seeds)
	fmt.Fprintf(w, "%s\n\n", setup)
	fmt.Fprintf(w, "restart: crash → every restarted fragment caught up (ms); recovery: the recovery-time metric (ms)\n")
	fmt.Fprintf(w, "%9s  %10s  %8s  %8s  %10s  %8s  %8s\n", "fragments", "gc restart", "model", "recovery", "ps restart", "model", "recovery")
	var pts []chainPoint
	done, total := 0, len(ns)*f.seeds
	for _, n := range ns {
		p := chainPoint{Fragments: n}
		for seed := 1; seed <= f.seeds; seed++ {
			done++
			fmt.Fprintf(progress, "chain-sweep: run %d of %d: chain of %d fragments, seed %d\n", done, total, n, seed)
			q, err := chainRun(n, uint64(seed), f)
			if err != nil {
				return err
			}
			addChain(&p, q, 1/float64(f.seeds))
		}
		fmt.Fprintf(w, "%9d  %10.1f  %8.1f  %8.1f  %10.1f  %8.1f  %8.1f\n", p.Fragments, p.GCRestartMs, p.GCModelMs, p.GCRecoveryMs, p.PSRestartMs, p.PSModelMs, p.PSRecoveryMs)
		pts = append(pts, p)
	}
	if f.noOut {
		return nil
	}
	dir := f.out
	if dir == "" {
		var err error
		// The directory's name only is stamped with the time; the results never are.
		if dir, err = newStampedDir(outRoot, "chain-sweep", time.Now()); err != nil {
			return fmt.Errorf("chain-sweep: %w", err)
		}
		linkLatest(outRoot, "latest-chain-sweep", dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("chain-sweep: %w", err)
	}
	if err := reports.WriteChainSweepReport(dir, &reports.ChainSweep{Setup: setup, Command: command, Points: pts}); err != nil {
		return fmt.Errorf("chain-sweep: %w", err)
	}
	fmt.Fprintf(w, "\nreport written to %s\n", filepath.Join(dir, "report.html"))
	return nil
}

// chainExperiment is a chain of n running sums with a crash of the middle one.
func chainExperiment(n int, seed uint64, f chainFlags) (*experiment.Experiment, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name: chain-%d\nseed: %d\nduration: 3.5s\ndrain: 2s\nsource: {rate: %g, keys: %d}\nnodes:\n", n, seed, f.rate, f.keys)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {name: F%d, ops: [{running_sum: {}}]}\n", i)
	}
	fmt.Fprintf(&b, "spares: 1\nnetwork: {latency: 1ms, jitter: 100us, bandwidth: 1Gbps}\n"+
		"cpu: {per_op: 2us, per_byte: %s, per_event: 1us}\ndetector: {heartbeat: 50ms, timeout: 200ms}\n"+
		"strategies:\n  - {name: %s, sink: transactional, checkpoint_interval: %s}\n  - {name: passive-standby, checkpoint_interval: %s}\n"+
		"faults:\n  - {at: 2.5s, crash: F%d}\n", f.perByte, globalcheckpoint.Name, f.interval, f.interval, (n+1)/2)
	return experiment.Parse([]byte(b.String()), fmt.Sprintf("chain of %d", n))
}

func chainRun(n int, seed uint64, f chainFlags) (chainPoint, error) {
	e, err := chainExperiment(n, seed, f)
	if err != nil {
		return chainPoint{}, err
	}
	cmp, err := sim.Compare(e, []string{globalcheckpoint.Name, "passive-standby"})
	if err != nil {
		return chainPoint{}, fmt.Errorf("chain of %d: %w", n, err)
	}
	p := chainPoint{Fragments: n}
	rec := func(i int) float64 {
		if r := cmp.Runs[i].Run.Recovery.RecoveryMs; r != nil {
			return *r
		}
		return -1
	}
	p.GCRecoveryMs, p.PSRecoveryMs = rec(0), rec(1)
	p.GCRestartMs, p.PSRestartMs = restartMs(cmp.Runs[0].Trace), restartMs(cmp.Runs[1].Trace)
	// The model takes the size of each snapshot restored from the trace
	// (the restore events of the first rollback, by fragment).
	state := map[string]float64{}
	for ev := range cmp.Runs[0].Trace.All() {
		frag, _, _ := strings.Cut(ev.Host, ".")
		if _, seen := state[frag]; ev.Kind == ha.EvRestore && !seen {
			state[frag] = float64(ev.N)
		}
	}
	cpu := e.CPU
	cost := (cpu.PerOp.D() + cpu.PerEvent.D() + 2*56*cpu.PerByte.D()).Seconds()
	in := globalcheckpoint.ModelInput{
		Detection: e.Detector.Timeout.D() + e.Detector.Heartbeat.D()/2,
		PerByte:   cpu.PerByte.D(), Interval: f.interval, Latency: e.Network.Latency.D(),
	}
	for i := 1; i <= n; i++ {
		s := state[fmt.Sprintf("F%d", i)]
		in.Frags = append(in.Frags, globalcheckpoint.ModelFrag{In: e.Source.Rate, Cost: cost, StateBytes: s})
	}
	p.GCModelMs = float64(globalcheckpoint.ModelRecovery(in)) / 1e6
	p.PSModelMs = reports.Model(e, "passive-standby", cmp.Runs[1].Run.Params)[reports.ModelRecoveryMs]
	return p, nil
}
