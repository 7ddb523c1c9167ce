package sim_test

import (
	"errors"
	"testing"

	"github.com/streamha/streamha/sim"
)

// FuzzParseExperiment feeds arbitrary bytes to the experiment parser: it
// must return an experiment or an ErrConfig error, never panic.
func FuzzParseExperiment(f *testing.F) {
	f.Add([]byte(sim.DefaultYAML))
	f.Add([]byte("source: {rate: 1, keys: 1}\nnodes: [{name: A, ops: [{map: {}}]}]\n"))
	f.Add([]byte("nodes: [{name: A, ops: [{tumbling: {size: -1s}}]}]"))
	f.Add([]byte("faults: [{at: 1s, partition: [[A], [B]], for: 1s}]"))
	f.Add([]byte("strategy: {name: amnesia}\nstrategies: [{name: none}]"))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := sim.Parse(b, "fuzz.yaml")
		if err != nil {
			if !errors.Is(err, sim.ErrConfig) {
				t.Fatalf("error does not wrap ErrConfig: %v", err)
			}
			return
		}
		if len(e.Nodes) == 0 || e.Source.Rate <= 0 {
			t.Fatalf("accepted an experiment that cannot run: %+v", e)
		}
	})
}
