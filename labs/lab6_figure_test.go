package labs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/labs"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sim"
)

// TestLab6RecomputesFromTheTraces: with the run's traces beside its
// result.json, lab 6 accepts the figure the definition gives for them and
// refuses any other, even one consistent with its own episodes. A
// simulated run of the lab's experiment stands in for the cluster's.
func TestLab6RecomputesFromTheTraces(t *testing.T) {
	e, err := experiment.Load("06-real-crashes/experiment.yaml")
	require.NoError(t, err)
	var faulty, ref *ha.Trace
	_, err = sim.CompareWith(e, []string{labs.Lab6Strategy}, sim.CompareOptions{Faulty: func(f metrics.FaultyRun) error {
		faulty, ref = f.Trace, f.Reference
		return nil
	}})
	require.NoError(t, err)
	real := metrics.RecoveryWith(ref, faulty, metrics.RecoveryOptions{Real: true})
	require.Equal(t, "pre-fault", real.DueFrom)
	require.NotNil(t, real.RecoveryMs)
	l, err := labs.Get(6)
	require.NoError(t, err)
	check := func(rec metrics.Recovery) labs.Verdict {
		dir := t.TempDir()
		res := &metrics.Result{Seed: e.Seed, Experiment: e.Name, Mode: "cluster", Faults: e.FaultDescriptions(),
			Runs: []metrics.Run{{Strategy: labs.Lab6Strategy, Recovery: rec}}}
		require.NoError(t, reports.WriteRunDir(dir, res, ref, []*ha.Trace{faulty}))
		_, err := os.Stat(filepath.Join(dir, "trace-"+labs.Lab6Strategy+".jsonl"))
		require.NoError(t, err)
		r, err := l.Check(labs.Answers{"q1": {"result.json"}}, labs.Options{BaseDir: dir, ClusterAvailable: true})
		require.NoError(t, err)
		for _, v := range r.Verdicts {
			if v.Key == "q1" {
				return v
			}
		}
		t.Fatal("no verdict on q1")
		return labs.Verdict{}
	}
	assert.True(t, check(real).Right, "the definition's own figure is accepted")

	forged := real
	forged.Episodes = append([]metrics.Episode(nil), real.Episodes...)
	more := *real.RecoveryMs + 4000
	forged.RecoveryMs, forged.Episodes[0].RecoveryMs = &more, &more
	v := check(forged)
	assert.False(t, v.Right)
	assert.Contains(t, v.Why, "not what the definition gives")
}
