package sim

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
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
func Reference(e *experiment.Experiment) (Config, *Outcome, error) {
	none, err := strategies.Build("none", nil)
	if err != nil {
		return Config{}, nil, err
	}
	cfg, err := ConfigFor(e, none, true)
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
	Faulty func(metrics.FaultyRun) error
}

// Compare runs the experiment under each named strategy (with the faults,
// and once more without them for overhead) plus the failure-free no-HA
// reference run, and computes every metric.
func Compare(e *experiment.Experiment, names []string) (*Comparison, error) {
	return CompareWith(e, names, CompareOptions{})
}

// CompareWith is Compare with options.
func CompareWith(e *experiment.Experiment, names []string, opts CompareOptions) (*Comparison, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	progress("reference run (failure-free, no HA)")
	_, ref, err := Reference(e)
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
		sr, err := runStrategy(e, name, ref.Trace, &base, progress, opts.Faulty)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, sr.Run)
		cmp.Runs = append(cmp.Runs, *sr)
	}
	return cmp, nil
}

// RunStrategy runs one strategy with and without faults and computes its figures.
func RunStrategy(e *experiment.Experiment, name string, reference *ha.Trace, base *metrics.Overhead) (*StrategyRun, error) {
	return runStrategy(e, name, reference, base, func(string) {}, nil)
}

// runStrategy runs one strategy failure-free (its overhead, and the
// timing every output is due at when its recovery is measured), then with
// the faults, classifies the faulty run and hands it to faulty (when set;
// the StrategyRun then has no trace). The failure-free trace keeps of each
// delivery only its time and id: with faulty, at most two full traces (the
// reference and one faulty run) are held at a time.
func runStrategy(e *experiment.Experiment, name string, reference *ha.Trace, base *metrics.Overhead, progress Progress,
	faulty func(metrics.FaultyRun) error) (*StrategyRun, error) {
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
	st2, err := build()
	if err != nil {
		return nil, err
	}
	ffCfg, err := ConfigFor(e, st2, true)
	if err != nil {
		return nil, err
	}
	ffCfg.TimingOnly = true
	progress(name + ": failure-free run (overhead, recovery reference)")
	ff, err := Run(ffCfg)
	if err != nil {
		return nil, fmt.Errorf("%s (failure-free): %w", name, err)
	}
	cfg, err := ConfigFor(e, st, false)
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
	ro := RecoveryOptions(e, ff.Trace)
	rec, classes := metrics.ClassifyRecoveryWith(reference, trace, ro)
	if trace.Deliveries().Len() <= checkRecoveryUpTo {
		if err := metrics.CheckRecovery(rec, reference, trace, ro); err != nil {
			// A figure the definition would not produce is a bug in the
			// metrics, never a result to print.
			return nil, fmt.Errorf("%s: recovery figures break their invariants (a bug in streamha, please report it with the experiment): %w", name, err)
		}
	}
	if faulty != nil {
		if err := faulty(metrics.FaultyRun{Strategy: name, Reference: reference, Own: ff.Trace, Trace: trace, Recovery: rec, Classes: classes}); err != nil {
			return nil, err
		}
		trace = nil
	}
	run := metrics.Run{
		Strategy: name, Params: params.Values(),
		Recovery: rec,
		Overhead: metrics.OverheadOf(ff.Trace, base),
		Extra:    extra,
	}
	return &StrategyRun{Run: run, Trace: trace, Events: events + ff.Events}, nil
}

// FailureFree runs strategy name on e without its faults and returns the
// trace, which keeps of each delivery only its time and id: the run a
// strategy's recovery is measured against.
func FailureFree(e *experiment.Experiment, name string) (*ha.Trace, error) {
	st, err := strategies.Build(name, e.ParamsFor(name))
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFor(e, st, true)
	if err != nil {
		return nil, err
	}
	cfg.TimingOnly = true
	out, err := Run(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s (failure-free): %w", name, err)
	}
	return out.Trace, nil
}

// checkRecoveryUpTo is the largest faulty run (in sink deliveries) whose
// recovery figures runStrategy checks against their invariants
// (metrics.CheckRecovery) before reporting them: every run of the test
// suite and the soak, while a run of millions of outputs does not pay
// the check's second pass over its output.
const checkRecoveryUpTo = 200_000

// RecoveryOptions are the options a simulated run of e is measured with:
// own, the strategy's own failure-free run; as the episode window the
// detector's timeout plus one heartbeat (plus the suspicion time of the
// memberlist model), the longest a detection takes; as the tolerance
// metrics.SimTolerance plus twice the network's jitter — a run whose
// messages took other paths or orders after the fault than the
// failure-free run's draws other jitter for the same output.
func RecoveryOptions(e *experiment.Experiment, own *ha.Trace) metrics.RecoveryOptions {
	d := detectorModel(e, 0)
	return metrics.RecoveryOptions{Own: own, Window: d.Timeout + d.Heartbeat,
		Tolerance: metrics.SimTolerance + 2*e.Network.Jitter.D()}
}

// ReferenceTrace is the expected output O_e of e: the trace of its
// failure-free run without HA (the reference the cluster runtime's runs
// are classified against).
func ReferenceTrace(e *experiment.Experiment) (*ha.Trace, error) {
	_, out, err := Reference(e)
	if err != nil {
		return nil, err
	}
	return out.Trace, nil
}

// RunPlanted runs e under strategy with the bugs p planted (ha.Planted),
// for the tests that show a fix guards its schedule: with its bug planted
// the schedule must fail.
func RunPlanted(e *experiment.Experiment, strategy string, p ha.Planted) (*Outcome, error) {
	st, err := strategies.Build(strategy, e.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFor(e, st, false)
	if err != nil {
		return nil, err
	}
	cfg.Planted = p
	return Run(cfg)
}
