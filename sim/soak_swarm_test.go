package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestGenerateSwarmSoakCase: swarm cases are a pure function of (seed,
// strategy, run), valid experiments whose faults name existing hosts, in
// time order, with the liveness bound inside the run; over a few hundred
// cases the shapes reach every query, fault kind and partition grouping,
// faults at the end of the stream and in the drain, and takeover races.
func TestGenerateSwarmSoakCase(t *testing.T) {
	t.Parallel()
	queries := map[string]bool{}
	kinds := map[string]bool{}
	var tail, drain, split, group, race int
	for _, strategy := range SoakStrategies() {
		for run := range uint64(40) {
			c, err := GenerateSwarmSoakCase(3, strategy, run)
			require.NoError(t, err)
			again, err := GenerateSwarmSoakCase(3, strategy, run)
			require.NoError(t, err)
			b1, _ := yaml.Marshal(c.Experiment)
			b2, _ := yaml.Marshal(again.Experiment)
			require.Equal(t, string(b1), string(b2), "deterministic")
			require.Equal(t, c.Shape, again.Shape)
			e := c.Experiment
			st, err := buildStrategy(c)
			require.NoError(t, err)
			_, err = ConfigFor(e, st, false)
			require.NoError(t, err, string(b1))
			queries[c.Query] = true
			require.GreaterOrEqual(t, e.End(), lastHeal(e.Faults)+SoakLivenessBound, string(b1))
			for i, f := range e.Faults {
				kinds[f.Kind()] = true
				if i > 0 {
					require.GreaterOrEqual(t, f.At, e.Faults[i-1].At)
					if d := f.At - e.Faults[i-1].At; d.D() <= soakDetectWindow && f.Crash != "" && e.Faults[i-1].Crash != "" {
						race++
					}
				}
				switch {
				case f.At.D() >= e.Duration.D():
					drain++
				case f.At.D() >= e.Duration.D()-soakSwarmTail:
					tail++
				}
				if len(f.Partition) > 0 {
					frags := map[string]int{}
					for gi, g := range f.Partition {
						for _, h := range g {
							frags[baseOf(h)] |= 1 << gi
						}
					}
					for _, sides := range frags {
						if sides == 3 {
							split++
						}
					}
					if len(f.Partition[0]) > 1 && len(f.Partition[1]) > 1 {
						group++
					}
				}
			}
		}
	}
	assert.Len(t, queries, len(swarmQueries))
	assert.Len(t, kinds, 6, "%v", kinds)
	for name, n := range map[string]int{"tail": tail, "drain": drain, "split": split, "group": group, "race": race} {
		assert.Positive(t, n, name)
	}
}
