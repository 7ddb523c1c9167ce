package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamha/streamha/ha/ops"
)

// Validate checks the experiment: every field against its range (see
// Limits; the options it was parsed with choose which), then the
// structure. Errors start with the field's path.
func (e *Experiment) Validate() error {
	if err := e.validateRanges(e.opts.limits()); err != nil {
		return err
	}
	if err := e.SourceSpec(0).Validate(); err != nil {
		return err
	}
	switch e.Source.Arrival {
	case "constant", "poisson":
	default:
		return fmt.Errorf("source.arrival: want constant or poisson, got %q", e.Source.Arrival)
	}
	if e.Source.Streams < 1 || e.Source.Streams > 2 {
		return fmt.Errorf("source.streams: want 1 or 2, got %d", e.Source.Streams)
	}
	if len(e.Nodes) == 0 {
		return fmt.Errorf("nodes: at least one node is needed")
	}
	if *e.Spares < 0 {
		return fmt.Errorf("spares: must not be negative, got %d", *e.Spares)
	}
	seen := map[string]bool{}
	for i, n := range e.Nodes {
		switch {
		case n.Name == "":
			return fmt.Errorf("nodes[%d].name: missing", i)
		case strings.ContainsAny(n.Name, ". \t/"):
			return fmt.Errorf("nodes[%d].name: %q must not contain '.', '/' or spaces", i, n.Name)
		case n.Name == "src" || n.Name == "src2" || n.Name == "sink":
			return fmt.Errorf("nodes[%d].name: %q is reserved", i, n.Name)
		case seen[n.Name]:
			return fmt.Errorf("nodes[%d].name: %q defined twice", i, n.Name)
		}
		seen[n.Name] = true
		if len(n.Ops) == 0 {
			return fmt.Errorf("nodes[%d].ops: node %s has no operators", i, n.Name)
		}
		for j, spec := range n.Ops {
			if len(spec) != 1 {
				return fmt.Errorf("nodes[%d].ops[%d]: want exactly one operator per entry, such as {map: {scale: 2}}", i, j)
			}
			for opName, params := range spec {
				if (opName == "union" || opName == "join") && (i != 0 || j != 0 || e.Source.Streams != 2) {
					return fmt.Errorf("nodes[%d].ops[%d]: %s needs two input streams: make it the first operator of the first node and set source.streams: 2", i, j, opName)
				}
				if _, err := ops.New(opName, params); err != nil {
					return fmt.Errorf("nodes[%d].ops[%d]: %w", i, j, err)
				}
			}
		}
	}
	switch e.Detector.Model {
	case "timeout", "memberlist":
	default:
		return fmt.Errorf("detector.model: want timeout or memberlist, got %q", e.Detector.Model)
	}
	if e.Detector.SuspicionMult < 0 {
		return fmt.Errorf("detector.suspicion_mult: must not be negative, got %d", e.Detector.SuspicionMult)
	}
	for i, f := range e.Faults {
		if err := e.validateFault(i, f); err != nil {
			return err
		}
	}
	return nil
}

func (e *Experiment) validateFault(i int, f FaultConfig) error {
	kinds := 0
	for _, set := range []bool{f.Crash != "", f.Pause != "", f.Partition != nil, f.Delay != nil, f.Loss != nil, f.Corrupt != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("faults[%d]: want exactly one of crash, pause, partition, delay, loss, corrupt", i)
	}
	if f.At.D() > e.End() {
		return fmt.Errorf("faults[%d].at: %s is after the end of the run (%s)", i, f.At.D(), e.End())
	}
	check := func(field, host string, allowEnds bool) error {
		if host == "" {
			return nil
		}
		if e.knownHost(host) {
			return nil
		}
		if allowEnds && (host == "src" || host == "src2" || host == "sink") {
			return nil
		}
		if host == "src" || host == "src2" || host == "sink" {
			return fmt.Errorf("faults[%d].%s: %s cannot fail (sources and the sink are outside the protected query)", i, field, host)
		}
		return fmt.Errorf("faults[%d].%s: unknown node %q (nodes: %s)", i, field, host, strings.Join(e.nodeNames(), ", "))
	}
	if err := check("crash", f.Crash, false); err != nil {
		return err
	}
	if err := check("pause", f.Pause, false); err != nil {
		return err
	}
	if f.Pause != "" || f.Partition != nil || f.Delay != nil || f.Loss != nil || f.Corrupt != nil {
		if f.For <= 0 {
			return fmt.Errorf("faults[%d].for: a pause, partition, delay, loss or corrupt needs a positive duration", i)
		}
	}
	for gi, g := range f.Partition {
		for _, h := range g {
			if err := check(fmt.Sprintf("partition[%d]", gi), h, true); err != nil {
				return err
			}
		}
	}
	if f.Partition != nil && len(f.Partition) < 2 {
		return fmt.Errorf("faults[%d].partition: want at least two groups, such as [[A], [B]]", i)
	}
	for _, lf := range []*LinkFault{f.Delay, f.Loss, f.Corrupt} {
		if lf == nil {
			continue
		}
		if err := check("from", lf.From, true); err != nil {
			return err
		}
		if err := check("to", lf.To, true); err != nil {
			return err
		}
	}
	if f.Loss != nil && !(f.Loss.P > 0 && f.Loss.P <= 1) {
		return fmt.Errorf("faults[%d].loss.p: want a probability in (0, 1], got %g", i, f.Loss.P)
	}
	if f.Corrupt != nil && !(f.Corrupt.P > 0 && f.Corrupt.P <= 1) {
		return fmt.Errorf("faults[%d].corrupt.p: want a probability in (0, 1], got %g", i, f.Corrupt.P)
	}
	if f.Delay != nil && f.Delay.Extra <= 0 {
		return fmt.Errorf("faults[%d].delay.extra: must be positive", i)
	}
	return nil
}

// knownHost accepts a node name or a replica/spare name "B.1", "B.2", ...
func (e *Experiment) knownHost(h string) bool {
	base, suffix, hasDot := strings.Cut(h, ".")
	for _, n := range e.Nodes {
		if n.Name == base {
			if !hasDot {
				return true
			}
			k, err := strconv.Atoi(suffix)
			return err == nil && k >= 1
		}
	}
	return false
}

func (e *Experiment) nodeNames() []string {
	var ns []string
	for _, n := range e.Nodes {
		ns = append(ns, n.Name)
	}
	return ns
}
