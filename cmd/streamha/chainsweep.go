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
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/globalcheckpoint"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
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
}

func newChainSweepCmd() *cobra.Command {
	var f chainFlags
	c := &cobra.Command{
		Use:   "chain-sweep",
		Short: "Recovery time of global rollback and passive standby as the chain grows",
		Long: "chain-sweep runs a chain of N fragments, each a per-key running sum over --keys keys (so every\n" +
			"fragment holds state), for every N in --fragments, crashes the middle fragment, and prints the\n" +
			"restart time (crash → every restarted fragment caught up) and the recovery time of global-checkpoint (every fragment restarts from the last completed checkpoint)\n" +
			"and passive-standby (the failed fragment alone restarts), each beside its model. With --out it\n" +
			"writes chain-sweep.png/.svg and chain-sweep.csv there.",
		Example: "  streamha chain-sweep\n  streamha chain-sweep --fragments 3,6,12 --keys 50000 --out docs/img",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChainSweep(cmd.OutOrStdout(), f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.fragments, "fragments", "3,4,6,8,10,12", "chain lengths to run (comma-separated, 2 to 32)")
	fl.IntVar(&f.keys, "keys", 25000, "keys of the source; a fragment's state holds one entry per key seen (1 to 1000000)")
	fl.Float64Var(&f.rate, "rate", 5000, "source rate, tuples/s (1 to 100000)")
	fl.DurationVar(&f.perByte, "per-byte", 200*time.Nanosecond, "CPU per byte serialised, read or deserialised (200ns: a checkpoint store read at 5 MB/s)")
	fl.DurationVar(&f.interval, "interval", time.Second, "checkpoint interval of both strategies")
	fl.IntVar(&f.seeds, "seeds", 3, "seeds per chain length (1 to 20); the table shows the means")
	fl.StringVar(&f.out, "out", "", "directory for the plot and CSV (none when empty)")
	return c
}

// chainPoint is one chain length's measured and modelled recovery, in ms.
type chainPoint struct {
	n            int
	gc, gcModel  float64
	ps, psModel  float64
	gcRec, psRec float64 // the recovery-time metric (docs/semantics.md)
}

// add adds w × q's figures to p (a running mean).
func (p *chainPoint) add(q chainPoint, w float64) {
	p.gc += w * q.gc
	p.gcModel += w * q.gcModel
	p.gcRec += w * q.gcRec
	p.ps += w * q.ps
	p.psModel += w * q.psModel
	p.psRec += w * q.psRec
}

// restartMs is metrics.Restart in ms, -1 when the trace has none.
func restartMs(tr *ha.Trace) float64 {
	d, _, _, ok := metrics.Restart(tr)
	if !ok {
		return -1
	}
	return float64(d) / float64(time.Millisecond)
}

func runChainSweep(w io.Writer, f chainFlags) error {
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
	fmt.Fprintf(w, "chain of running sums, %g tuples/s over %d keys, %s per byte, crash of the middle fragment, checkpoint interval %s, mean of %d seeds\n\n",
		f.rate, f.keys, f.perByte, f.interval, f.seeds)
	fmt.Fprintf(w, "restart: crash → every restarted fragment caught up (ms); recovery: the recovery-time metric (ms)\n")
	fmt.Fprintf(w, "%9s  %10s  %8s  %8s  %10s  %8s  %8s\n", "fragments", "gc restart", "model", "recovery", "ps restart", "model", "recovery")
	var pts []chainPoint
	for _, n := range ns {
		var p chainPoint
		for seed := 1; seed <= f.seeds; seed++ {
			q, err := chainRun(n, uint64(seed), f)
			if err != nil {
				return err
			}
			p.add(q, 1/float64(f.seeds))
		}
		p.n = n
		fmt.Fprintf(w, "%9d  %10.1f  %8.1f  %8.1f  %10.1f  %8.1f  %8.1f\n", p.n, p.gc, p.gcModel, p.gcRec, p.ps, p.psModel, p.psRec)
		pts = append(pts, p)
	}
	if f.out == "" {
		return nil
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("chain-sweep: %w", err)
	}
	var csv strings.Builder
	csv.WriteString("fragments,global_checkpoint_restart_ms,global_checkpoint_model_ms,global_checkpoint_recovery_ms,passive_standby_restart_ms,passive_standby_model_ms,passive_standby_recovery_ms\n")
	for _, p := range pts {
		fmt.Fprintf(&csv, "%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", p.n, p.gc, p.gcModel, p.gcRec, p.ps, p.psModel, p.psRec)
	}
	if err := os.WriteFile(filepath.Join(f.out, "chain-sweep.csv"), []byte(csv.String()), 0o644); err != nil {
		return fmt.Errorf("chain-sweep: %w", err)
	}
	return chainPlot(pts, f.out)
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
	p := chainPoint{n: n}
	rec := func(i int) float64 {
		if r := cmp.Runs[i].Run.Recovery.RecoveryMs; r != nil {
			return *r
		}
		return -1
	}
	p.gcRec, p.psRec = rec(0), rec(1)
	p.gc, p.ps = restartMs(cmp.Runs[0].Trace), restartMs(cmp.Runs[1].Trace)
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
	p.gcModel = float64(globalcheckpoint.ModelRecovery(in)) / 1e6
	p.psModel = reports.Model(e, "passive-standby", cmp.Runs[1].Run.Params)[reports.ModelRecoveryMs]
	return p, nil
}

func chainPlot(pts []chainPoint, dir string) error {
	p := plot.New()
	p.Title.Text = "Restart time as the chain grows (crash of the middle fragment)"
	p.X.Label.Text = "fragments in the chain"
	p.Y.Label.Text = "crash → every restarted fragment caught up (ms)"
	line := func(get func(chainPoint) float64) plotter.XYs {
		var xy plotter.XYs
		for _, c := range pts {
			if v := get(c); v >= 0 {
				xy = append(xy, plotter.XY{X: float64(c.n), Y: v})
			}
		}
		return xy
	}
	if err := plotutil.AddLinePoints(p,
		"global-checkpoint (measured)", line(func(c chainPoint) float64 { return c.gc }),
		"global-checkpoint (model)", line(func(c chainPoint) float64 { return c.gcModel }),
		"passive-standby (measured)", line(func(c chainPoint) float64 { return c.ps }),
		"passive-standby (model)", line(func(c chainPoint) float64 { return c.psModel }),
	); err != nil {
		return fmt.Errorf("chain-sweep plot: %w", err)
	}
	p.Y.Min = 0 // restart times are compared from zero, not from the smallest
	p.Legend.Top, p.Legend.Left = false, false
	for _, ext := range []string{"png", "svg"} {
		if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, "chain-sweep."+ext)); err != nil {
			return fmt.Errorf("chain-sweep plot: %w", err)
		}
	}
	return nil
}
