package sim

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// Reporter is an optional capability of a strategy: figures it wants in
// the result after a run (an auto-chosen checkpoint interval, say).
type Reporter interface {
	Report() map[string]any
}

// StrategyRun is one strategy's simulated runs.
type StrategyRun struct {
	Run metrics.Run
	// Trace is the faulty run's trace (nil when CompareOptions.Faulty took it).
	Trace *ha.Trace
	// Events is the number of simulator events processed (both runs).
	Events int64
}

// Comparison is the outcome of Compare.
type Comparison struct {
	Result *metrics.Result
	// Reference is the failure-free no-HA run's trace (O_e).
	Reference *ha.Trace
	Runs      []StrategyRun
}

// Reference runs the experiment failure-free without HA: its sink output is
// the expected output O_e every recovery is classified against, and its
// counters are the overhead baseline. It returns the run's configuration
// too (its topology, say).
func (e *Experiment) Reference() (Config, *Outcome, error) {
	none, err := strategies.Build("none", nil)
	if err != nil {
		return Config{}, nil, err
	}
	cfg, err := e.SimConfig(none, true)
	if err != nil {
		return cfg, nil, err
	}
	out, err := Run(cfg)
	if err != nil {
		return cfg, nil, fmt.Errorf("reference run: %w", err)
	}
	return cfg, out, nil
}

// Progress is told the name of each stage of a comparison as it starts:
// with millions of tuples a run or a classification takes seconds.
type Progress func(stage string)

// CompareOptions are the optional parts of a comparison.
type CompareOptions struct {
	// Progress, when set, is told each stage as it starts.
	Progress Progress
	// Faulty, when set, is handed each strategy's faulty run as soon as it
	// is classified, before the strategy's failure-free run; the
	// comparison then keeps no faulty trace (StrategyRun.Trace is nil). A
	// caller that writes traces and figures as they come holds one faulty
	// trace at a time, however many strategies run.
	Faulty func(FaultyRun) error
}

// FaultyRun is one strategy's classified run with the faults.
type FaultyRun struct {
	Strategy  string
	Reference *ha.Trace // the failure-free no-HA run (O_e)
	Trace     *ha.Trace
	Recovery  metrics.Recovery
	// Classes is the classification Recovery was computed from: every
	// delivery's label and the id index.
	Classes classify.Result
}

// Compare runs the experiment under each named strategy (with the faults,
// and once more without them for overhead) plus the failure-free no-HA
// reference run, and computes every metric.
func Compare(e *Experiment, names []string) (*Comparison, error) {
	return CompareWith(e, names, CompareOptions{})
}

// CompareWith is Compare with options.
func CompareWith(e *Experiment, names []string, opts CompareOptions) (*Comparison, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	progress("reference run (failure-free, no HA)")
	_, ref, err := e.Reference()
	if err != nil {
		return nil, err
	}
	base := metrics.OverheadOf(ref.Trace, nil)
	base.Nodes = nil
	cfgText, _ := yaml.Marshal(e)
	res := &metrics.Result{
		Seed: e.Seed, Experiment: e.Name, Mode: "sim", QueryClass: e.QueryClass().String(),
		Faults: e.FaultDescriptions(), Config: string(cfgText), Baseline: base,
	}
	cmp := &Comparison{Result: res, Reference: ref.Trace}
	for _, name := range names {
		sr, err := e.runStrategy(name, ref.Trace, &base, progress, opts.Faulty)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, sr.Run)
		cmp.Runs = append(cmp.Runs, *sr)
	}
	return cmp, nil
}

// RunStrategy runs one strategy with and without faults and computes its figures.
func (e *Experiment) RunStrategy(name string, reference *ha.Trace, base *metrics.Overhead) (*StrategyRun, error) {
	return e.runStrategy(name, reference, base, func(string) {}, nil)
}

// runStrategy runs one strategy with the faults, classifies the run, hands
// it to faulty (when set; the StrategyRun then has no trace), and runs it
// failure-free for its overhead. The classifier's working set (and, with
// faulty, the faulty trace) is released before the failure-free run, whose
// trace keeps only the latencies: with faulty, at most two full traces
// (the reference and one faulty run) are held at a time.
func (e *Experiment) runStrategy(name string, reference *ha.Trace, base *metrics.Overhead, progress Progress,
	faulty func(FaultyRun) error) (*StrategyRun, error) {
	info, err := strategies.Lookup(name)
	if err != nil {
		return nil, err
	}
	params, err := info.Parse(e.ParamsFor(name))
	if err != nil {
		return nil, err
	}
	build := func() (ha.Strategy, error) {
		s, err := info.New(params)
		if err != nil {
			return nil, fmt.Errorf("strategy %s: %w", name, err)
		}
		return s, nil
	}
	st, err := build()
	if err != nil {
		return nil, err
	}
	cfg, err := e.SimConfig(st, false)
	if err != nil {
		return nil, err
	}
	progress(name + ": run with the faults")
	fo, err := Run(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var extra map[string]any
	if r, ok := st.(Reporter); ok {
		extra = r.Report()
	}
	progress(fmt.Sprintf("%s: classifying %d outputs against %d expected", name,
		fo.Trace.Deliveries().Len(), reference.Deliveries().Len()))
	trace, events := fo.Trace, fo.Events
	rec, classes := metrics.ClassifyRecovery(reference, trace)
	if faulty != nil {
		if err := faulty(FaultyRun{Strategy: name, Reference: reference, Trace: trace, Recovery: rec, Classes: classes}); err != nil {
			return nil, err
		}
		trace = nil
	}
	st2, err := build()
	if err != nil {
		return nil, err
	}
	ffCfg, err := e.SimConfig(st2, true)
	if err != nil {
		return nil, err
	}
	ffCfg.LatenciesOnly = true
	progress(name + ": failure-free run (overhead)")
	ff, err := Run(ffCfg)
	if err != nil {
		return nil, fmt.Errorf("%s (failure-free): %w", name, err)
	}
	run := metrics.Run{
		Strategy: name, Params: params.Values(),
		Recovery: rec,
		Overhead: metrics.OverheadOf(ff.Trace, base),
		Extra:    extra,
	}
	return &StrategyRun{Run: run, Trace: trace, Events: events + ff.Events}, nil
}

// FaultDescriptions describes the fault schedule in words.
func (e *Experiment) FaultDescriptions() []string {
	out := []string{}
	for _, f := range e.Faults {
		at := f.At.D().String()
		switch {
		case f.Crash != "":
			out = append(out, fmt.Sprintf("crash %s at %s", f.Crash, at))
		case f.Pause != "":
			out = append(out, fmt.Sprintf("pause %s at %s for %s", f.Pause, at, f.For.D()))
		case f.Partition != nil:
			var gs []string
			for _, g := range f.Partition {
				gs = append(gs, "["+strings.Join(g, " ")+"]")
			}
			out = append(out, fmt.Sprintf("partition %s at %s for %s", strings.Join(gs, " | "), at, f.For.D()))
		case f.Delay != nil:
			out = append(out, fmt.Sprintf("delay %s→%s +%s at %s for %s", any1(f.Delay.From), any1(f.Delay.To), f.Delay.Extra.D(), at, f.For.D()))
		case f.Loss != nil:
			out = append(out, fmt.Sprintf("loss %s→%s p=%g at %s for %s", any1(f.Loss.From), any1(f.Loss.To), f.Loss.P, at, f.For.D()))
		case f.Corrupt != nil:
			out = append(out, fmt.Sprintf("corrupt %s→%s p=%g at %s for %s", any1(f.Corrupt.From), any1(f.Corrupt.To), f.Corrupt.P, at, f.For.D()))
		}
	}
	return out
}

func any1(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// End is when the run stops (duration + drain).
func (e *Experiment) End() time.Duration { return e.Duration.D() + e.Drain.D() }
