package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/experiment"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

type benchFlags struct {
	quick   bool
	scaling bool
	img     string
	repeat  int
}

// benchSize is how much work each figure of streamha bench does.
type benchSize struct {
	repeat    int // repetitions of every timed figure (the median is reported)
	classify  int // outputs classified
	codec     int // tuples encoded and decoded
	runtimeN  int // tuples through the in-process runtime and the channel peer
	strategyN int // tuples per strategy in the in-process overhead runs
	runWall   int // repetitions of the streamha run measurement
	// clusterRounds and clusterRun: paired overhead rounds of the default
	// experiment on real processes, and how long each run lasts;
	// planeRounds and planeRun the same at the data-plane load.
	clusterRounds int
	clusterRun    time.Duration
	planeRounds   int
	planeRun      time.Duration
	scaleTuples   []int
	scaleNodes    []int
	scaleKeys     []int
	keysTuples    int
}

var (
	quickSize = benchSize{repeat: 3, classify: 200_000, codec: 200_000, runtimeN: 300_000, strategyN: 100_000, runWall: 3,
		clusterRounds: 3, clusterRun: 4 * time.Second, planeRounds: 2, planeRun: 4 * time.Second,
		scaleTuples: []int{1e4, 1e5, 1e6}, scaleNodes: []int{3, 10, 30}, scaleKeys: []int{10, 1e3, 1e5}, keysTuples: 1e5}
	fullSize = benchSize{repeat: 7, classify: 1_000_000, codec: 1_000_000, runtimeN: 2_000_000, strategyN: 400_000, runWall: 7,
		clusterRounds: 5, clusterRun: 8 * time.Second, planeRounds: 3, planeRun: 6 * time.Second,
		scaleTuples: []int{1e4, 1e5, 1e6, 1e7}, scaleNodes: []int{3, 10, 30, 100}, scaleKeys: []int{10, 100, 1e3, 1e4, 1e5, 1e6}, keysTuples: 1e6}
)

func newBenchCmd() *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the simulator, classifier, codec and runtimes; print one table",
		Long: "bench measures, in one invocation: simulator throughput (tuple-events/s), classifier throughput,\n" +
			"codec cost per tuple, the in-process runtime against a hand-written channel pipeline running the same\n" +
			"operators, cluster throughput on loopback (when cluster mode is built), each strategy's overhead\n" +
			"against the no-HA run, the wall time of `streamha run`, and upstream backup's and active standby's\n" +
			"process and loop CPU against no HA on real processes, at the default experiment's 2000 tuples/s and at\n" +
			"300 k tuples/s (medians of 5 and 3 paired rounds, 3 and 2 with --quick: about 5 minutes, 3 with --quick).\n" +
			"Every timed figure is repeated and the median is printed with the spread (max/min) so noise is\n" +
			"visible. --scaling also measures how the simulator's time and memory grow with tuples, nodes and\n" +
			"keys and writes PNG plots, then the time and peak heap of a whole `streamha run` of the largest\n" +
			"every-output experiment (10 M tuples, about 2 minutes; 1 M with --quick; see 'streamha docs benchmarks').",
		Example: "  streamha bench --quick\n  streamha bench\n  streamha bench --quick --scaling --img docs/img",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.quick, "quick", false, "a fast, CI-sized run")
	fl.BoolVar(&f.scaling, "scaling", false, "also measure scaling with tuples, nodes and keys and write plots")
	fl.StringVar(&f.img, "img", "docs/img", "directory for the scaling plots")
	fl.IntVar(&f.repeat, "repeat", 0, "repetitions of every timed figure (default 3 with --quick, else 7)")
	return c
}

// row is one line of the bench table.
type row struct{ what, measured, target, spread string }

func runBench(ctx context.Context, out, errw io.Writer, f benchFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	size := fullSize
	if f.quick {
		size = quickSize
	}
	if f.repeat < 0 {
		return usage("--repeat: must not be negative, got %d", f.repeat)
	}
	if f.repeat > 0 {
		size.repeat, size.runWall = f.repeat, f.repeat
	}
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		fmt.Fprintf(errw, "bench: %s: %s\n", r.what, r.measured)
	}
	steps := []func(benchSize, func(row)) error{benchSim, benchClassify, benchCodec, benchRuntime, benchCluster, benchRunWall, benchStrategies, benchRepair, benchClusterOverhead}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(size, add); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\tmeasured\ttarget\tspread (max/min of %d)\n", size.repeat)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.what, r.measured, r.target, r.spread)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s, %d CPUs, GOMAXPROCS=%d\n", runtime.Version(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
	if f.scaling {
		return benchScaling(out, errw, size, f.img)
	}
	return nil
}

// timed runs f n times and returns the durations.
func timed(n int, f func() error) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}

func spread(xs []float64) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", hi/lo)
}

func secs(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2f G", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f ", v)
}

// ---- simulator ----

// simRunsPerSample is the number of default-experiment runs one timed
// simulator sample covers.
const simRunsPerSample = 10

// ---- classifier ----

// ---- codec ----

// ---- in-process runtime vs the channel pipeline ----

// runtimeQuery is the default query's operators with the window scaled to
// the bench's source rate (20 M tuples/s of event time), so windows close
// as often as in the default experiment.
const runtimeQuery = `name: bench-runtime
seed: 1
duration: %s
drain: 60s
source: {rate: %g, keys: 16, batch: %s}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1ms, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
`

const benchRate = 20e6

// benchLimits check the benchmarks' experiments: their rates and sizes
// are real big runs (docs/experiment.md, Ranges).
var benchLimits = experiment.ParseOptions{AllowLarge: true}

// planeRate is the source rate of the data-plane overhead benchmark: the
// cluster throughput target (docs/benchmarks.md), a load at which the node
// loops spend their time on tuples instead of waking up for a few of them.
const planeRate = 300_000

// ---- streamha run ----

// ---- strategies ----

// ---- scaling ----

const scaleRate = 20000.0
