package experiment_test

import (
	"errors"
	"testing"

	"github.com/streamha/streamha/experiment"
)

// FuzzParseExperiment feeds arbitrary bytes to the experiment parser: it
// must return an experiment or an ErrConfig error, never panic, and an
// experiment it accepts is a bounded run: every field within NormalLimits.
func FuzzParseExperiment(f *testing.F) {
	f.Add([]byte(experiment.DefaultYAML))
	f.Add([]byte("source: {rate: 1, keys: 1}\nnodes: [{name: A, ops: [{map: {}}]}]\n"))
	f.Add([]byte("nodes: [{name: A, ops: [{tumbling: {size: -1s}}]}]"))
	f.Add([]byte("faults: [{at: 1s, partition: [[A], [B]], for: 1s}]"))
	f.Add([]byte("strategy: {name: amnesia}\nstrategies: [{name: none}]"))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte("source: {rate: 100, keys: 4, skew: .inf}\nnodes: [{name: A, ops: [{map: {}}]}]\n"))
	f.Add([]byte("source: {rate: 1e300, keys: 4}\nduration: 2562047h\nnodes: [{name: A, ops: [{map: {}}]}]\n"))
	f.Add([]byte("source: {rate: 1, keys: 1}\nnodes: [{name: A, ops: [{map: {}}]}]\nstrategy: {name: passive-standby, checkpoint_interval: [1s]}\n---\nname: b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := experiment.Parse(b, "fuzz.yaml")
		if err != nil {
			if !errors.Is(err, experiment.ErrConfig) {
				t.Fatalf("error does not wrap ErrConfig: %v", err)
			}
			return
		}
		if len(e.Nodes) == 0 || e.Source.Rate <= 0 {
			t.Fatalf("accepted an experiment that cannot run: %+v", e)
		}
		l := experiment.NormalLimits
		s := e.Source
		switch {
		case e.Duration.D() > l.MaxDuration, e.Drain.D() > l.MaxDrain,
			!(s.Rate <= l.MaxRate), !(s.Rate*e.Duration.D().Seconds() <= l.MaxSourceTuples),
			!(s.Skew >= 0 && s.Skew <= experiment.MaxSkew), s.Keys > l.MaxKeys, s.Batch.D() < l.MinBatch,
			len(e.Nodes) > l.MaxNodes, *e.Spares > l.MaxSpares, len(e.Faults) > l.MaxFaults,
			!(e.Network.Loss >= 0 && e.Network.Loss < 1):
			t.Fatalf("accepted an experiment outside the limits: %+v", e)
		}
		for _, n := range e.Nodes {
			if len(n.Ops) > l.MaxOps || len(n.Name) > experiment.MaxNameLen {
				t.Fatalf("accepted node %q with %d operators", n.Name, len(n.Ops))
			}
		}
	})
}
