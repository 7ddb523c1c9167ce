// Package why tells the causal story of one output of a simulated run: the
// source tuples its lineage holds, every hop it took (host, role, epoch,
// seq), what the next stage did with each copy (accepted, dropped as a
// duplicate seq, fenced as stale, lost in an input gap), the fault and
// recovery events on its path, and how all of it differs from the same id
// in the failure-free run.
//
// A story needs every tuple every host emitted, which a run's trace does
// not keep; a simulated run is a pure function of its experiment and seed,
// so Load reruns the experiment a run directory's result.json records with
// trace_emits on and checks the rerun against the recorded figures.
package why

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// ErrUsage marks errors the CLI reports with exit status 2: no such run
// directory, a run that cannot be rerun, an unknown strategy or output id.
var ErrUsage = errors.New("why usage")

// Run is one strategy's faulty run and the failure-free reference, both
// with every emit traced, and the classification of the faulty run.
type Run struct {
	Strategy  string
	Exp       *experiment.Experiment
	Faulty    *ha.Trace
	Reference *ha.Trace
	Classes   classify.Result
	Recovery  metrics.Recovery
	// Picked says why Load chose Strategy when it was not given ("" when
	// it was given, or the run held one strategy).
	Picked   string
	exp, obs *ha.Deliveries
	pipeline []string // fragment names in data-flow order: source, nodes, sink
}

// Rerun runs strategy name on e with and without the faults, tracing every
// emit. e is modified (TraceEmits set).
func Rerun(e *experiment.Experiment, name string) (*Run, error) {
	e.TraceEmits = true
	info, err := strategies.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	params, err := info.Parse(e.ParamsFor(name))
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	st, err := info.New(params)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", name, err)
	}
	cfg, err := sim.ConfigFor(e, st, false)
	if err != nil {
		return nil, err
	}
	out, err := sim.Run(cfg)
	if err != nil {
		return nil, fmt.Errorf("rerun of %s: %w", name, err)
	}
	_, ref, err := sim.Reference(e)
	if err != nil {
		return nil, err
	}
	plain := *e // the strategy's own failure-free run, for the recovery time
	plain.TraceEmits = false
	own, err := sim.FailureFree(&plain, name)
	if err != nil {
		return nil, err
	}
	r := &Run{Strategy: name, Exp: e, Faulty: out.Trace, Reference: ref.Trace}
	r.Recovery, r.Classes = metrics.ClassifyRecoveryWith(ref.Trace, out.Trace, sim.RecoveryOptions(e, own))
	r.exp, r.obs = ref.Trace.Deliveries(), out.Trace.Deliveries()
	r.pipeline = append(r.pipeline, "src")
	for _, n := range e.Nodes {
		r.pipeline = append(r.pipeline, n.Name)
	}
	r.pipeline = append(r.pipeline, "sink")
	return r, nil
}

// result is the part of result.json Load reads.
type result struct {
	Mode   string `json:"mode"`
	Config string `json:"config"`
	Runs   []struct {
		Strategy string           `json:"strategy"`
		Recovery metrics.Recovery `json:"recovery"`
	} `json:"runs"`
}

// Load reruns strategy (or the run's only strategy when "") of the run
// directory dir and checks that the rerun classifies exactly as recorded.
func Load(dir, strategy string) (*Run, error) {
	path := filepath.Join(dir, "result.json")
	b, err := safefile.ReadFile(path, safefile.MaxSmallFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --run: %w (give the directory 'streamha run --out DIR' wrote)", ErrUsage, err)
	}
	var res result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%w: %s: not a streamha result.json: %w", ErrUsage, path, err)
	}
	if res.Mode != "sim" {
		return nil, fmt.Errorf("%w: %s is a %q result: why reruns simulated runs only ('streamha run')", ErrUsage, path, res.Mode)
	}
	if res.Config == "" {
		return nil, fmt.Errorf("%w: %s records no experiment config to rerun", ErrUsage, path)
	}
	var names, anomalous []string
	idx, firstAnomalous := -1, -1
	for i, r := range res.Runs {
		names = append(names, r.Strategy)
		if r.Strategy == strategy {
			idx = i
		}
		if r.Recovery.Type != classify.TypePrecise {
			anomalous = append(anomalous, fmt.Sprintf("%s (%s)", r.Strategy, r.Recovery.Label()))
			if firstAnomalous < 0 {
				firstAnomalous = i
			}
		}
	}
	picked := ""
	switch {
	case strategy == "" && len(res.Runs) == 1:
		idx, strategy = 0, res.Runs[0].Strategy
	case strategy == "" && len(anomalous) == 1:
		// The one strategy whose output differs from the failure-free
		// run's is the one a question about an output is about.
		idx, strategy = firstAnomalous, res.Runs[firstAnomalous].Strategy
		picked = fmt.Sprintf("explaining %s, the only strategy of this run that did not recover precisely (%s); "+
			"choose another of %s with --strategy", anomalous[0], path, strings.Join(names, ", "))
	case strategy == "" && len(anomalous) == 0:
		return nil, fmt.Errorf("%w: %s holds runs of %s, all precise: choose one with --strategy", ErrUsage, path, strings.Join(names, ", "))
	case strategy == "":
		return nil, fmt.Errorf("%w: %s holds runs of %s, of which %s did not recover precisely: choose one with --strategy",
			ErrUsage, path, strings.Join(names, ", "), strings.Join(anomalous, ", "))
	case idx < 0:
		return nil, fmt.Errorf("%w: --strategy %s: %s holds runs of %s only", ErrUsage, strategy, path, strings.Join(names, ", "))
	}
	e, err := experiment.Parse([]byte(res.Config), path+" (config)")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	r, err := Rerun(e, strategy)
	if err != nil {
		return nil, err
	}
	r.Picked = picked
	want, got := res.Runs[idx].Recovery, r.Recovery
	if want.Type != got.Type || want.Missing != got.Missing || want.Duplicates != got.Duplicates ||
		want.Wrong != got.Wrong || want.Delivered != got.Delivered {
		return nil, fmt.Errorf("the rerun of %s differs from %s (recorded %s, %d delivered; rerun %s, %d delivered): was it written by another version of streamha? Run the experiment again",
			strategy, path, want.Label(), want.Delivered, got.Label(), got.Delivered)
	}
	return r, nil
}

// fragment is the fragment a host belongs to ("A" for A.1).
func fragment(host string) string {
	f, _, _ := strings.Cut(host, ".")
	return f
}

// next is the fragment downstream of f ("" for the sink).
func (r *Run) next(f string) string {
	for i, p := range r.pipeline {
		if p == f && i+1 < len(r.pipeline) {
			return r.pipeline[i+1]
		}
	}
	return ""
}

// stage is f's position in the pipeline (-1 when unknown).
func (r *Run) stage(f string) int {
	for i, p := range r.pipeline {
		if p == f {
			return i
		}
	}
	return -1
}
