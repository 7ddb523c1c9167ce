package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/safefile"
	"github.com/streamha/streamha/strategies"
)

// byTime merges the events of several nodes (and the launcher's own) into
// one trace, in time order; events of equal time keep their order.
func byTime(events []ha.Event) *ha.Trace {
	sort.SliceStable(events, func(i, j int) bool { return events[i].T < events[j].T })
	return ha.NewTrace(events...)
}

// ReadTraceTolerant reads a node's JSONL trace, or while the node runs
// (and after it was killed) the partial file it writes first
// (PartialTraceFile). A process killed with SIGKILL may leave a partial
// last line; it is ignored. A missing file is an empty trace only if the
// node never got to create it.
func ReadTraceTolerant(path string) ([]ha.Event, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return readTraceFile(path + ".partial")
	}
	return readTraceFile(path)
}

// readTraceFile is ReadTraceTolerant of exactly path.
func readTraceFile(path string) ([]ha.Event, error) {
	f, err := safefile.Open(path, safefile.MaxTraceFile)
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

// Reference computes the expected output O_e of an experiment: the sink
// output of its failure-free run without HA. The cluster runtime never runs
// a simulation itself; its caller supplies this.
type Reference func(e *experiment.Experiment) (*ha.Trace, error)

// Collect computes the result of a run whose nodes were started by hand
// (multi-host: docker compose, Kubernetes) from the node traces gathered
// into dir (<host>.trace.jsonl), with the faults `streamha cluster` traced
// into FaultTraceFile(dir) when it is there. Faults injected by hand are in
// no trace, so detection and recovery times are then left out; the
// recovery type and counts are computed as usual.
func Collect(e *experiment.Experiment, strategy, dir string, reference Reference) (*Comparison, error) {
	st, err := strategies.Build(strategy, e.ParamsFor(strategy))
	if err != nil {
		return nil, err
	}
	ref, err := reference(e)
	if err != nil {
		return nil, err
	}
	var events []ha.Event
	found := 0
	topo := e.Topology(st)
	sched, err := e.Schedule(topo, strategy)
	if err != nil {
		return nil, err
	}
	for _, h := range topo.Hosts() {
		tr, complete, err := readNodeTrace(dir, h)
		if err != nil && !errors.Is(err, ErrIncompleteTrace) {
			return nil, err
		}
		if !complete && !crashedIn(sched, h) {
			// Only a host the schedule kills may leave its trace unfinished:
			// a cut or unfinished trace of any other would be classified as
			// outputs the run never lost.
			if err == nil {
				err = fmt.Errorf("%s: %w: the node never finished it (killed, or its writes failed)", PartialTraceFile(dir, h), ErrIncompleteTrace)
			}
			return nil, fmt.Errorf("collect: %w; refusing to classify the run from it "+
				"(only a host the experiment's fault schedule crashes may leave an unfinished trace)", err)
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
		Recovery: metrics.RecoveryWith(ref, trace, metrics.RecoveryOptions{Real: true}),
		Overhead: metrics.OverheadOf(trace, nil),
		Extra:    clusterFigures(trace, e),
	}
	res.Runs = append(res.Runs, run)
	return &Comparison{Result: res, Reference: ref, Runs: []RunOutcome{{Strategy: strategy, Dir: dir, Trace: trace}}}, nil
}

// crashedIn reports whether the schedule kills host.
func crashedIn(faults []experiment.Fault, host string) bool {
	for _, f := range faults {
		if f.Kind == experiment.FaultCrash && f.Host == host {
			return true
		}
	}
	return false
}
