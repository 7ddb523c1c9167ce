package labs

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/reports"
)

// lab6FigureProblem says why the recovery figure of a cluster run is not
// one the recovery definition would produce (docs/semantics.md), or ""
// when it is: it must have its fault episodes and the real-run tolerance,
// report its worst episode, recover no earlier than that episode's
// detection, and — when the run's traces are beside its result.json
// (trace-reference.jsonl and trace-<strategy>.jsonl, as streamha cluster
// --out writes them) — equal what the definition computes from them.
func lab6FigureProblem(run *metrics.Run, dir string) string {
	rr := run.Recovery
	if rr.EpisodeCount == 0 || len(rr.Episodes) != rr.EpisodeCount {
		return "this result.json has no fault episodes (episodes, episode_count): an older streamha wrote it, whose recovery time is not the one this lab asks about. Run the cluster again with this streamha."
	}
	if rr.ToleranceMs < float64(metrics.RealMinTolerance)/1e6 {
		return fmt.Sprintf("this result.json was measured with a %.2f ms tolerance, below the real-run minimum of %.0f ms: it is not a real run's figure. Run the cluster again with this streamha.",
			rr.ToleranceMs, float64(metrics.RealMinTolerance)/1e6)
	}
	worst := -1
	for i, e := range rr.Episodes {
		if e.NotRecovered {
			worst = i
			break
		}
		if e.RecoveryMs != nil && (worst < 0 || *e.RecoveryMs > *rr.Episodes[worst].RecoveryMs) {
			worst = i
		}
	}
	if worst < 0 || !sameMs(rr.RecoveryMs, rr.Episodes[worst].RecoveryMs) || rr.NotRecovered != rr.Episodes[worst].NotRecovered {
		return "recovery_ms in this result.json is not its worst episode's: the file was edited, or not written by this streamha."
	}
	if e := rr.Episodes[worst]; e.RecoveryMs != nil && e.DetectionMs != nil && *e.RecoveryMs < *e.DetectionMs-1e-6 {
		return fmt.Sprintf("recovery_ms %.1f is below the episode's detection (%.1f ms): no run recovers before its failure is detected.", *e.RecoveryMs, *e.DetectionMs)
	}
	ref, err1 := reports.ReadTrace(filepath.Join(dir, "trace-reference.jsonl"))
	tr, err2 := reports.ReadTrace(filepath.Join(dir, "trace-"+run.Strategy+".jsonl"))
	if err1 != nil || err2 != nil || rr.DueFrom != "pre-fault" {
		return "" // nothing more to recompute from: the figures are consistent
	}
	o := metrics.RecoveryOptions{Real: true}
	want := metrics.RecoveryWith(ref, tr, o)
	if !sameMs(want.RecoveryMs, rr.RecoveryMs) || want.NotRecovered != rr.NotRecovered {
		return fmt.Sprintf("recovery_ms in this result.json (%s) is not what the definition gives for the traces beside it (%s).", rr.RecoveryText(), want.RecoveryText())
	}
	if err := metrics.CheckRecovery(rr, ref, tr, o); err != nil {
		return fmt.Sprintf("the recovery figures break their invariants: %v", err)
	}
	return ""
}

// sameMs reports whether two optional figures are equal to 0.05 ms.
func sameMs(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) <= 0.05
}

// lab6Explain compares the real and simulated recovery with the runs' own
// numbers: detection, the rest, the tolerance and the largest added
// latency.
func lab6Explain(real, sim metrics.Recovery) string {
	ms := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	return fmt.Sprintf("Real: detection %.1f ms, recovery %.1f ms, largest added latency %.1f ms, tolerance %.1f ms (twice the spread of the real latencies, at least 5 ms). "+
		"Simulated: detection %.1f ms, recovery %.1f ms, largest added latency %.1f ms, tolerance %.1f ms. "+
		"The difference is mostly detection (memberlist's real probes and suspicion against the model's); once detected, both recover as soon as the outputs arrive on time again.",
		ms(real.DetectionMs), ms(real.RecoveryMs), real.MaxAddedLatencyMs, real.ToleranceMs,
		ms(sim.DetectionMs), ms(sim.RecoveryMs), sim.MaxAddedLatencyMs, sim.ToleranceMs)
}
