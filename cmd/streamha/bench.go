package main

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/vmihailenco/msgpack/v5"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/inproc"
	hametrics "github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
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
			"every-output experiment (10 M tuples, about 2 minutes; 1 M with --quick; see docs/benchmarks.md).",
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

// tupleEvents counts tuples handled by any host (processed by a fragment or
// delivered to the sink), from the hosts' end-of-run counters.
func tupleEvents(trace *ha.Trace) int64 {
	var n int64
	for _, e := range trace.Events() {
		if e.Kind == ha.EvStats {
			n += e.Stats.Tuples
		}
	}
	return n
}

// ---- simulator ----

// simRunsPerSample is the number of default-experiment runs one timed
// simulator sample covers.
const simRunsPerSample = 10

func benchSim(size benchSize, add func(row)) error {
	e := sim.Default()
	st, err := strategies.Build("none", nil)
	if err != nil {
		return err
	}
	cfg, err := e.SimConfig(st, false)
	if err != nil {
		return err
	}
	// One run takes ~10 ms, about as long as a garbage collection cycle
	// or a burst from a neighbour on a shared machine: each sample times
	// simRunsPerSample runs so that such costs are averaged, not sampled.
	var events int64
	ds, err := timed(size.repeat, func() error {
		for range simRunsPerSample {
			o, err := sim.Run(cfg)
			if err != nil {
				return err
			}
			events = tupleEvents(o.Trace)
		}
		return nil
	})
	if err != nil {
		return err
	}
	rates := make([]float64, len(ds))
	for i, d := range ds {
		rates[i] = float64(events*simRunsPerSample) / d.Seconds()
	}
	add(row{"simulator, default experiment, no HA", human(hametrics.Median(rates)) + "tuple-events/s", "≥ 5 M/s per core", spread(rates)})
	return nil
}

// ---- classifier ----

// classifyWorkload is a failure-free log of n windowed outputs over 1000
// keys as sink deliveries, and an observed log with a few missing,
// duplicated and wrong outputs.
func classifyWorkload(n int) (exp, obs *ha.Deliveries) {
	const keys = 1000
	var e, o ha.Trace
	deliver := func(tr *ha.Trace, i int, v float64, t time.Duration) {
		tu := ha.Tuple{Key: uint32(i % keys), Value: v, Lineage: ha.Lineage{N: uint32(100 + i%50)},
			ID: ha.OutputID{Kind: ha.IDWindow, Key: uint32(i % keys), X: int64(i/keys) * int64(time.Second)}}
		tr.Add(ha.Event{T: t, Kind: ha.EvDeliver, Tuple: &tu})
	}
	for i := range n {
		v, t := float64(i%997)/4, time.Duration(i/keys*1000+i%keys)*time.Millisecond
		deliver(&e, i, v, t)
		switch {
		case i%20011 == 0:
			continue
		case i%30011 == 1:
			deliver(&o, i, v, t)
			t += 500 * time.Millisecond
		case i%40009 == 2:
			v += 0.001
		}
		deliver(&o, i, v, t)
	}
	return e.Deliveries(), o.Deliveries()
}

// benchClassify times the classifier on one workload in both of its
// forms: as text (classify.Classify on Outputs, what `streamha classify`
// reads) and in place (ha/metrics.Classify on deliveries, what `streamha
// run` uses).
func benchClassify(size benchSize, add func(row)) error {
	exp, obs := classifyWorkload(size.classify)
	texts := [2][]classify.Output{hametrics.Outputs(exp), hametrics.Outputs(obs)}
	n := human(float64(obs.Len()))
	if err := timeClassifier(size, add, fmt.Sprintf("classifier, %s outputs over 1000 keys", n), "1 M outputs < 2 s", obs.Len(),
		func() classify.Result { return classify.Classify(texts[0], texts[1], nil) }); err != nil {
		return err
	}
	return timeClassifier(size, add, fmt.Sprintf("classifier in place (simulator deliveries), %s outputs", n), "", obs.Len(),
		func() classify.Result { return hametrics.Classify(exp, obs, nil) })
}

// timeClassifier times classify over n observed outputs and adds its row;
// the workload must come out as a gap.
func timeClassifier(size benchSize, add func(row), what, target string, n int, classify1 func() classify.Result) error {
	var r classify.Result
	ds, err := timed(size.repeat, func() error {
		r = classify1()
		return nil
	})
	if err != nil {
		return err
	}
	if r.Type != classify.TypeGap {
		return fmt.Errorf("bench: %s: the workload gave %s, want gap", what, r.Type)
	}
	rates := make([]float64, len(ds))
	for i, d := range ds {
		rates[i] = float64(n) / d.Seconds()
	}
	add(row{what, human(hametrics.Median(rates)) + "outputs/s", target, spread(rates)})
	return nil
}

// ---- codec ----

func benchCodec(size benchSize, add func(row)) error {
	t := ha.Tuple{Stream: 0, Seq: 7, Key: 3, Time: 12345678, Emit: 12345678, Value: 0.25,
		ID: ha.OutputID{Kind: ha.IDWindow, Key: 3, X: 1e9}, Lineage: ha.Lineage{N: 17, Hash: 0xdeadbeef}}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	dec := msgpack.NewDecoder(&buf)
	var got ha.Tuple
	size1 := 0
	single, err := timed(size.repeat, func() error {
		for range size.codec {
			if err := t.EncodeMsgpack(enc); err != nil {
				return err
			}
			size1 = buf.Len()
			if err := got.DecodeMsgpack(dec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m := ha.Message{Kind: ha.KindData, From: "A", Epoch: 1}
	for i := range 64 {
		tt := t
		tt.Seq = uint64(i + 1)
		m.Tuples = append(m.Tuples, tt)
	}
	var mbuf bytes.Buffer
	menc := msgpack.NewEncoder(&mbuf)
	mdec := msgpack.NewDecoder(&mbuf)
	var mgot ha.Message
	msgSize := 0
	batches := max(1, size.codec/64)
	batched, err := timed(size.repeat, func() error {
		for range batches {
			mbuf.Reset()
			if err := m.EncodeMsgpack(menc); err != nil {
				return err
			}
			msgSize = mbuf.Len()
			mdec.Reset(&mbuf)
			if err := mgot.DecodeMsgpack(mdec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ns := func(ds []time.Duration, n int) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = float64(d.Nanoseconds()) / float64(n)
		}
		return out
	}
	s, b := ns(single, size.codec), ns(batched, batches*64)
	add(row{"codec, one tuple encode+decode (reused Encoder/Decoder)", fmt.Sprintf("%.0f ns/tuple, %d bytes/tuple", hametrics.Median(s), size1), "≤ 120 ns", spread(s)})
	add(row{"codec, per tuple in a 64-tuple data message", fmt.Sprintf("%.0f ns/tuple, %.1f bytes/tuple", hametrics.Median(b), float64(msgSize)/64), "", spread(b)})
	return nil
}

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
var benchLimits = sim.ParseOptions{AllowLarge: true}

func runtimeExperiment(n int) (*sim.Experiment, error) {
	dur := time.Duration(float64(n) / benchRate * float64(time.Second))
	// a wake-up every 50 µs: about 1000 tuples per source batch when on time
	return sim.ParseWith([]byte(fmt.Sprintf(runtimeQuery, dur, float64(benchRate), "50us")), "bench", benchLimits)
}

// runInproc runs the bench query in process under strategy and returns
// the time until the last data message was handled and the tuples the
// source emitted.
func runInproc(n int, strategy string) (time.Duration, int64, error) {
	e, err := runtimeExperiment(n)
	if err != nil {
		return 0, 0, err
	}
	st, err := strategies.Build(strategy, e.ParamsFor(strategy))
	if err != nil {
		return 0, 0, err
	}
	sc, err := e.SimConfig(st, true)
	if err != nil {
		return 0, 0, err
	}
	o, err := inproc.Run(context.Background(), inproc.Config{
		Seed: sc.Seed, Topology: sc.Topology, Source: sc.Source, End: sc.End, StopWhenDrained: true,
		NewStrategy: func() (ha.Strategy, error) { return strategies.Build(strategy, e.ParamsFor(strategy)) },
	})
	if err != nil {
		return 0, 0, err
	}
	var emitted int64
	for _, ev := range o.Trace.Events() {
		if ev.Kind == ha.EvStats && ev.Host == "A" {
			emitted = ev.Stats.Tuples
		}
	}
	return o.LastData, emitted, nil
}

func runPeer(n, batch int) (time.Duration, error) {
	e, err := runtimeExperiment(n)
	if err != nil {
		return 0, err
	}
	st, err := strategies.Build("none", nil)
	if err != nil {
		return 0, err
	}
	topo := e.Topology(st)
	var stages [][]ha.Operator
	for _, fr := range topo.Frags {
		ops, err := fr.NewOps()
		if err != nil {
			return 0, err
		}
		stages = append(stages, ops)
	}
	p := inproc.Pipeline{Stages: stages, Batch: batch, Buffer: 64}
	res, err := p.Run(context.Background(), n, inproc.Source(benchRate, 16, e.Seed))
	return res.Wall, err
}

func benchRuntime(size benchSize, add func(row)) error {
	n := size.runtimeN
	var rt, peer1, peerB []float64
	var emitted int64
	for range size.repeat {
		// interleaved, so drifting load on a shared machine hits all three alike
		d, em, err := runInproc(n, "none")
		if err != nil {
			return err
		}
		emitted = em
		rt = append(rt, float64(em)/d.Seconds())
		d, err = runPeer(n, 1000)
		if err != nil {
			return err
		}
		peerB = append(peerB, float64(n)/d.Seconds())
		d, err = runPeer(n, 1)
		if err != nil {
			return err
		}
		peer1 = append(peer1, float64(n)/d.Seconds())
	}
	ratios := make([]float64, len(rt))
	for i := range rt {
		ratios[i] = peerB[i] / rt[i]
	}
	add(row{fmt.Sprintf("in-process runtime, default query, %s tuples", human(float64(emitted))), human(hametrics.Median(rt)) + "tuples/s", "", spread(rt)})
	add(row{"channel pipeline peer, batches of 1000", human(hametrics.Median(peerB)) + "tuples/s", "", spread(peerB)})
	add(row{"channel pipeline peer, one tuple per send", human(hametrics.Median(peer1)) + "tuples/s", "", spread(peer1)})
	add(row{"runtime cost vs batched peer (time ratio)", fmt.Sprintf("%.2f×", hametrics.Median(ratios)), "≤ 2×", spread(ratios)})
	return nil
}

func benchCluster(size benchSize, add func(row)) error {
	var rates []float64
	for range size.repeat {
		r, err := clusterThroughput(context.Background(), size.runtimeN/10)
		if err != nil {
			return err
		}
		rates = append(rates, r)
	}
	add(row{"cluster throughput on loopback", human(hametrics.Median(rates)) + "tuples/s", "", spread(rates)})
	return nil
}

// planeRate is the source rate of the data-plane overhead benchmark: the
// cluster throughput target (docs/benchmarks.md), a load at which the node
// loops spend their time on tuples instead of waking up for a few of them.
const planeRate = 300_000

// benchClusterOverhead measures the cluster-mode CPU targets: upstream
// backup's and active standby's process and loop CPU against no HA, as
// medians of paired rounds, at two loads: the default experiment (2000
// tuples/s, loops nearly idle) and the data-plane load (planeRate).
func benchClusterOverhead(size benchSize, add func(row)) error {
	targets := map[string]string{"upstream-backup": "≤ 1.1×", "active-standby": "≤ 2.1×"}
	names := []string{"upstream-backup", "active-standby"}
	def := sim.Default()
	def.Name = "bench-overhead"
	if err := scaleDuration(def, size.clusterRun); err != nil {
		return err
	}
	loads := []struct {
		what   string
		e      *sim.Experiment
		rounds int
	}{
		{fmt.Sprintf("default experiment, %s", size.clusterRun), def, size.clusterRounds},
		{fmt.Sprintf("%stuples/s, %s, no spares", human(planeRate), size.planeRun),
			dataPlaneExperiment("bench-plane-overhead", planeRate, size.planeRun), size.planeRounds},
	}
	for _, load := range loads {
		r, err := clusterOverhead(context.Background(), load.e, load.rounds, names)
		if err != nil {
			return fmt.Errorf("cluster overhead (%s): %w", load.what, err)
		}
		for _, run := range r.Runs {
			o := run.Overhead
			if o.CPURatio == nil || o.ProcessCPURatio == nil || o.CPURatioRange == nil || o.ProcessCPURatioRange == nil {
				return fmt.Errorf("cluster overhead (%s): %s: no ratio to the baseline", load.what, run.Strategy)
			}
			add(row{fmt.Sprintf("cluster CPU vs no HA: %s (%s; process, loop)", run.Strategy, load.what),
				fmt.Sprintf("%.2f×, %.2f×", *o.ProcessCPURatio, *o.CPURatio), targets[run.Strategy],
				fmt.Sprintf("process %.2f–%.2f, loop %.2f–%.2f over %d paired rounds",
					o.ProcessCPURatioRange.Min, o.ProcessCPURatioRange.Max, o.CPURatioRange.Min, o.CPURatioRange.Max, o.Rounds)})
		}
	}
	return nil
}

// ---- streamha run ----

func benchRunWall(size benchSize, add func(row)) error {
	dir, err := os.MkdirTemp("", "streamha-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ds, err := timed(size.runWall, func() error {
		e := sim.Default()
		cmp, err := compareInto(e, strategies.Names(false), dir, nil, "")
		if err != nil {
			return err
		}
		if err := reports.Table(io.Discard, cmp.Result); err != nil {
			return err
		}
		reports.Explanations(io.Discard, cmp.Result, 5)
		return nil
	})
	if err != nil {
		return err
	}
	s := secs(ds)
	add(row{"streamha run (all strategies, defaults, report written)", fmt.Sprintf("%.2f s", hametrics.Median(s)), "< 1 s", spread(s)})
	return nil
}

// ---- strategies ----

func benchStrategies(size benchSize, add func(row)) error {
	e := sim.Default()
	names := strategies.Names(false)
	cmp, err := sim.Compare(e, names)
	if err != nil {
		return err
	}
	none, err := strategies.Build("none", nil)
	if err != nil {
		return err
	}
	ffNone, err := e.SimConfig(none, true)
	if err != nil {
		return err
	}
	for i, name := range names {
		st, err := strategies.Build(name, e.ParamsFor(name))
		if err != nil {
			return err
		}
		ff, err := e.SimConfig(st, true)
		if err != nil {
			return err
		}
		var simRatio, rtRatio []float64
		for range size.repeat {
			base, err := timed(1, func() error { _, err := sim.Run(ffNone); return err })
			if err != nil {
				return err
			}
			with, err := timed(1, func() error { _, err := sim.Run(ff); return err })
			if err != nil {
				return err
			}
			simRatio = append(simRatio, with[0].Seconds()/base[0].Seconds())
			b, _, err := runInproc(size.strategyN, "none")
			if err != nil {
				return err
			}
			w, _, err := runInproc(size.strategyN, name)
			if err != nil {
				return err
			}
			rtRatio = append(rtRatio, w.Seconds()/b.Seconds())
		}
		ov := cmp.Result.Runs[i].Overhead
		ratio := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf("%.2f", *p)
		}
		add(row{"overhead vs no HA: " + name,
			fmt.Sprintf("simulated: messages %s×, bytes %s×, CPU %s×; wall: simulator %.2f×, in-process runtime %.2f×",
				ratio(ov.MessagesRatio), ratio(ov.BytesRatio), ratio(ov.CPURatio), hametrics.Median(simRatio), hametrics.Median(rtRatio)),
			"", "sim " + spread(simRatio) + ", runtime " + spread(rtRatio)})
	}
	return nil
}

// ---- scaling ----

// scalePoint is one measured run of the scaling study.
type scalePoint struct {
	x        float64
	wall     time.Duration
	peakHeap uint64
	events   int64
}

// measure runs f with a sampler of the live heap and returns the wall time
// and the peak heap seen (the trace stays reachable until f returns).
func measure(f func() (int64, error)) (scalePoint, error) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	t0 := time.Now()
	ev, err := f()
	wall := time.Since(t0)
	close(stop)
	<-done
	p := scalePoint{wall: wall, events: ev}
	if peak > base {
		p.peakHeap = peak - base
	}
	return p, err
}

func simRun(yaml string) func() (int64, error) {
	return func() (int64, error) {
		e, err := sim.ParseWith([]byte(yaml), "scaling", benchLimits)
		if err != nil {
			return 0, err
		}
		st, err := strategies.Build("none", nil)
		if err != nil {
			return 0, err
		}
		cfg, err := e.SimConfig(st, true)
		if err != nil {
			return 0, err
		}
		o, err := sim.Run(cfg)
		if err != nil {
			return 0, err
		}
		n := tupleEvents(o.Trace)
		runtime.KeepAlive(o)
		return n, nil
	}
}

const scaleRate = 20000.0

// defaultQueryYAML is the default query at scaleRate for n tuples over keys.
func defaultQueryYAML(n, keys int) string {
	d := time.Duration(float64(n) / scaleRate * float64(time.Second))
	return fmt.Sprintf(`name: scaling
seed: 42
duration: %s
drain: 3s
source: {rate: %g, keys: %d}
nodes:
  - {name: A, ops: [{filter: {value_gt: 0.1}}, {map: {scale: 2}}]}
  - {name: B, ops: [{tumbling: {size: 1s, agg: sum}}]}
  - {name: C, ops: [{map: {scale: 1}}]}
`, d, scaleRate, keys)
}

// chainYAML is a chain of k map nodes (every tuple reaches the sink).
func chainYAML(n, k int) string {
	d := time.Duration(float64(n) / scaleRate * float64(time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "name: chain\nseed: 42\nduration: %s\ndrain: 3s\nsource: {rate: %g, keys: 16}\nnodes:\n", d, scaleRate)
	for i := range k {
		fmt.Fprintf(&b, "  - {name: N%d, ops: [{map: {scale: 1}}]}\n", i)
	}
	return b.String()
}

func benchScaling(out, errw io.Writer, size benchSize, img string) error {
	type study struct {
		name, xlabel string
		xs           []int
		yaml         func(x int) string
		note         string
	}
	studies := []study{
		{"tuples", "source tuples", size.scaleTuples, func(x int) string { return defaultQueryYAML(x, 16) },
			"default query (filter+map → tumbling 1 s sum → map), 16 keys, 20 k tuples/s"},
		{"tuples-map", "source tuples", size.scaleTuples, func(x int) string { return chainYAML(x, 3) },
			"3 map nodes: every source tuple is a sink delivery in the trace"},
		{"nodes", "nodes in the chain", size.scaleNodes, func(x int) string { return chainYAML(100_000, x) },
			"chain of map nodes, 100 k tuples"},
		{"keys", "keys", size.scaleKeys, func(x int) string { return defaultQueryYAML(size.keysTuples, x) },
			fmt.Sprintf("default query, %s tuples", human(float64(size.keysTuples)))},
	}
	if err := os.MkdirAll(img, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", img, err)
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(out, "\nscaling of the simulator (no HA, no faults; peak heap above the idle heap):\n")
	fmt.Fprintf(tw, "study\tx\twall\tpeak heap\ttuple-events\ttuple-events/s\tbytes per tuple-event\n")
	for _, s := range studies {
		var pts []scalePoint
		for _, x := range s.xs {
			p, err := measure(simRun(s.yaml(x)))
			if err != nil {
				return fmt.Errorf("scaling %s=%d: %w", s.name, x, err)
			}
			p.x = float64(x)
			pts = append(pts, p)
			fmt.Fprintf(errw, "bench: scaling %s=%d: %s, peak heap %.1f MiB\n", s.name, x, p.wall.Round(time.Millisecond), float64(p.peakHeap)/(1<<20))
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f MiB\t%d\t%s/s\t%.0f\n", s.name, x, p.wall.Round(time.Millisecond),
				float64(p.peakHeap)/(1<<20), p.events, human(float64(p.events)/p.wall.Seconds()), float64(p.peakHeap)/float64(max(1, p.events)))
		}
		if err := scalingPlot(filepath.Join(img, "scaling-"+s.name+".png"), s.xlabel, s.note, pts); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "plots written to %s/scaling-{tuples,tuples-map,nodes,keys}.png\n", img)
	return benchWholeRun(out, errw, size.scaleTuples[len(size.scaleTuples)-1])
}

// benchWholeRun measures a whole `streamha run` — reference run, every
// strategy with and without the crash, classification, run directory and
// report written — of the every-tuple-delivered chain of n tuples with a
// crash of the middle node half-way: the memory target is about a whole
// experiment, not the simulator alone.
func benchWholeRun(out, errw io.Writer, n int) error {
	yaml := chainYAML(n, 3) + fmt.Sprintf("faults: [{at: %s, crash: N1}]\n",
		time.Duration(float64(n)/scaleRate/2*float64(time.Second)))
	e, err := sim.ParseWith([]byte(yaml), "whole-run", benchLimits)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "streamha-bench-whole-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names := strategies.Names(false)
	fmt.Fprintf(errw, "bench: whole run of %s every-output tuples, %d strategies…\n", human(float64(n)), len(names))
	p, err := measure(func() (int64, error) {
		_, err := compareInto(e, names, dir, nil, "")
		return 0, err
	})
	if err != nil {
		return fmt.Errorf("whole run: %w", err)
	}
	fmt.Fprintf(out, "\nwhole streamha run, %s tuples through 3 map nodes (every tuple delivered), crash of N1, %s, run directory written:\n"+
		"  %s wall, peak heap %.0f MiB (target for a 10 M-tuple experiment: < 2 GiB; heap objects, live and not yet collected)%s\n",
		human(float64(n)), strings.Join(names, ", "), p.wall.Round(time.Millisecond), float64(p.peakHeap)/(1<<20), peakRSS())
	return nil
}

// peakRSS describes the bench process's peak resident set so far — the
// whole run's, as it is the bench's largest — or "" when unknown.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss <= 0 {
		return ""
	}
	return fmt.Sprintf("; process peak RSS %.0f MiB", float64(ru.Maxrss)/(1<<10)) // Maxrss is in KiB
}

// scalingPlot draws wall time and peak heap against x on log-log axes, one
// panel each, side by side.
func scalingPlot(path, xlabel, note string, pts []scalePoint) error {
	mk := func(title, ylabel string, y func(scalePoint) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		var xy plotter.XYs
		var lin plotter.XYs
		for _, pt := range pts {
			v := y(pt)
			if v > 0 && pt.x > 0 && !math.IsNaN(v) {
				xy = append(xy, plotter.XY{X: pt.x, Y: v})
			}
		}
		if len(xy) > 0 {
			// a linear reference through the first point
			for _, q := range xy {
				lin = append(lin, plotter.XY{X: q.X, Y: xy[0].Y * q.X / xy[0].X})
			}
		}
		if len(xy) == 0 {
			return p, nil
		}
		if err := plotutil.AddLinePoints(p, "measured", xy, "linear from the first point", lin); err != nil {
			return nil, err
		}
		p.Legend.Top, p.Legend.Left = true, true
		return p, nil
	}
	pt, err := mk("simulator wall time\n"+note, "seconds", func(p scalePoint) float64 { return p.wall.Seconds() })
	if err != nil {
		return err
	}
	pm, err := mk("peak heap", "MiB", func(p scalePoint) float64 { return float64(p.peakHeap) / (1 << 20) })
	if err != nil {
		return err
	}
	c := vgimg.NewWith(vgimg.UseWH(11*vg.Inch, 4.5*vg.Inch), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: 8 * vg.Millimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	pt.Draw(tiles.At(dc, 0, 0))
	pm.Draw(tiles.At(dc, 1, 0))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
