package sim_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	_ "github.com/streamha/streamha/strategies/all"
)

// corpusRun is one strategy's run of a corpus experiment with what the
// independent recomputation needs.
type corpusRun struct {
	name             string
	ref, own, faulty *ha.Trace
	rec              metrics.Recovery
	window, tol      time.Duration
}

// runCorpus runs every strategy named on the experiment in path and keeps
// the three traces: the reference O_e, the strategy's own failure-free run
// and the faulty run.
func runCorpus(t *testing.T, e *experiment.Experiment, names []string) []corpusRun {
	var runs []corpusRun
	cmp, err := sim.CompareWith(e, names, sim.CompareOptions{Faulty: func(f metrics.FaultyRun) error {
		runs = append(runs, corpusRun{name: f.Strategy, ref: f.Reference, own: f.Own, faulty: f.Trace,
			rec: f.Recovery, window: sim.RecoveryOptions(e, nil).Window, tol: time.Millisecond + 2*e.Network.Jitter.D()})
		return nil
	}})
	require.NoError(t, err, e.Name)
	require.Len(t, runs, len(names))
	for i := range runs {
		require.Equal(t, cmp.Result.Runs[i].Recovery, runs[i].rec, "the result holds the figures handed over")
	}
	return runs
}

// recompute is the recovery rule of docs/semantics.md written out again
// from the traces alone, independently of ha/metrics: each episode's
// recovery in ms, or -1 when it did not recover.
func recompute(r corpusRun) []float64 {
	type span struct {
		start, end time.Duration
		any        bool
		hosts      []string
	}
	var faults []span
	open := map[string]int{}
	for _, e := range r.faulty.Events() {
		switch e.Kind {
		case ha.EvCrash:
			faults = append(faults, span{e.T, e.T, false, []string{e.Host}})
		case ha.EvPause:
			faults = append(faults, span{e.T, e.T + time.Duration(e.N), false, []string{e.Host}})
		case ha.EvLinkFault:
			faults = append(faults, span{e.T, e.T + time.Duration(e.N), true, nil})
		case ha.EvPartition:
			open[e.Note] = len(faults)
			faults = append(faults, span{e.T, math.MaxInt64, true, nil})
		case ha.EvHeal:
			faults[open[e.Note]].end = e.T
		}
	}
	slices.SortStableFunc(faults, func(a, b span) int { return int(a.start - b.start) })
	var eps []span
	for _, f := range faults {
		if n := len(eps); n > 0 && f.start <= eps[n-1].end+r.window {
			eps[n-1].end, eps[n-1].any, eps[n-1].hosts = max(eps[n-1].end, f.end), eps[n-1].any || f.any, append(eps[n-1].hosts, f.hosts...)
			continue
		}
		eps = append(eps, f)
	}
	ownAt, arrived := map[ha.OutputID]time.Duration{}, map[ha.OutputID]time.Duration{}
	for _, d := range r.own.Deliveries().All() {
		if _, ok := ownAt[d.Tuple.ID]; !ok {
			ownAt[d.Tuple.ID] = d.T
		}
	}
	var last time.Duration
	for _, d := range r.faulty.Deliveries().All() {
		if _, ok := arrived[d.Tuple.ID]; !ok {
			arrived[d.Tuple.ID] = d.T
		}
		last = d.T
	}
	end := last
	for _, e := range r.faulty.Events() {
		end = max(end, e.T)
	}
	tol := r.tol
	out := make([]float64, len(eps))
	for k, ep := range eps {
		next := end + 1
		if k+1 < len(eps) {
			next = eps[k+1].start
		}
		point := ep.start
		for _, e := range r.faulty.Events() { // detection
			if e.Kind == ha.EvDetect && e.T >= ep.start && e.T < next && (ep.any || slices.Contains(ep.hosts, e.Peer)) {
				point = e.T
				break
			}
		}
		for id, own := range ownAt {
			if own >= next || (own < ep.start && k > 0) {
				continue
			}
			a, ok := arrived[id]
			if !ok { // came back when a later output of its key arrived, before the run's end
				back := time.Duration(math.MaxInt64)
				for id2, own2 := range ownAt {
					if a2, ok := arrived[id2]; ok && id2.Key == id.Key && own2 > own {
						back = min(back, a2)
					}
				}
				if back > end {
					out[k] = -1
					break
				}
				point = max(point, back)
			} else if a > own+tol {
				point = max(point, a)
			}
		}
		if out[k] == 0 {
			out[k] = float64(point-ep.start) / 1e6
		}
	}
	return out
}

// TestRecoveryCorpus runs the experiments of testdata/recovery — stalls
// hidden by a later harmless fault, a crash during a loss burst, a
// window-size sweep, checkpoint pauses, a global checkpoint crashed before
// its first release, a pause overlapping a partition — under every
// strategy, checks the invariants and that an independent recomputation
// from the traces agrees with the tool, and the outcomes the cases are
// about.
func TestRecoveryCorpus(t *testing.T) {
	all := []string{"amnesia", "active-standby", "global-checkpoint", "passive-standby", "upstream-backup"}
	files, err := filepath.Glob("testdata/recovery/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			e := mustLoad(t, f)
			runs := runCorpus(t, e, all)
			byName := map[string]metrics.Recovery{}
			for _, r := range runs {
				byName[r.name] = r.rec
				require.NoError(t, metrics.CheckRecovery(r.rec, r.ref, r.faulty, sim.RecoveryOptions(e, r.own)), r.name)
				want := recompute(r)
				require.Len(t, r.rec.Episodes, len(want), r.name)
				for k, w := range want {
					ep := r.rec.Episodes[k]
					if w < 0 {
						assert.True(t, ep.NotRecovered, "%s episode %d: the recomputation says not recovered", r.name, k+1)
						continue
					}
					require.NotNil(t, ep.RecoveryMs, "%s episode %d: the recomputation says %.3f ms", r.name, k+1, w)
					assert.InDelta(t, w, *ep.RecoveryMs, 1e-6, "%s episode %d", r.name, k+1)
				}
			}
			checkCorpusOutcome(t, name, byName)
		})
	}
}

func mustLoad(t *testing.T, path string) *experiment.Experiment {
	e, err := experiment.Load(path)
	require.NoError(t, err)
	return e
}

// checkCorpusOutcome checks what each corpus case is about.
func checkCorpusOutcome(t *testing.T, name string, r map[string]metrics.Recovery) {
	switch name {
	case "drain-stall":
		a := r["amnesia"]
		assert.True(t, a.NotRecovered, "nothing was delivered after the crash in the drain")
		require.Len(t, a.Episodes, 2)
		assert.True(t, a.Episodes[0].NotRecovered, "the crash in the drain is the episode that did not recover")
		assert.False(t, a.Episodes[1].NotRecovered, "the idle spare's crash disturbed nothing")
	case "loss-burst-crash", "window-500ms", "window-2s", "window-4s", "checkpoint-pauses":
		for s, rec := range r {
			if s == "amnesia" {
				continue
			}
			require.NotNil(t, rec.RecoveryMs, s)
			ep := rec.Episodes[0]
			require.NotNil(t, ep.DetectionMs, s)
			assert.LessOrEqual(t, *rec.RecoveryMs, *ep.DetectionMs+ep.MaxAddedLatencyMs+rec.ToleranceMs+1e-6,
				"%s: on-time precise recovery within detection plus the largest added latency plus the tolerance", s)
			assert.Less(t, *rec.RecoveryMs, 1000.0, "%s: hundreds of ms, not seconds", s)
		}
	case "gc-before-release":
		as, gc, ps := r["active-standby"], r["global-checkpoint"], r["passive-standby"]
		require.NotNil(t, as.RecoveryMs)
		for s, rec := range map[string]metrics.Recovery{"global-checkpoint": gc, "passive-standby": ps} {
			require.NotNil(t, rec.RecoveryMs, s)
			assert.LessOrEqual(t, *rec.RecoveryMs, 3**as.RecoveryMs, "%s within a small factor of active standby's", s)
		}
	case "pause-partition":
		for s, rec := range r {
			assert.Len(t, rec.Episodes, 2, "%s: the pause and the partition are one episode, the crash another", s)
		}
	}
}
