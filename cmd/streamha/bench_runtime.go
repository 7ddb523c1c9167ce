package main

import (
	"context"
	"fmt"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	hametrics "github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/inproc"
	"github.com/streamha/streamha/strategies"
)

func runtimeExperiment(n int) (*experiment.Experiment, error) {
	dur := time.Duration(float64(n) / benchRate * float64(time.Second))
	// a wake-up every 50 µs: about 1000 tuples per source batch when on time
	return experiment.ParseWith([]byte(fmt.Sprintf(runtimeQuery, dur, float64(benchRate), "50us")), "bench", benchLimits)
}

// runInproc runs the bench query in process under strategy and returns
// the time until the last data message was handled and the tuples the
// source emitted.
func runInproc(n int, strategy string) (time.Duration, int64, error) {
	e, err := runtimeExperiment(n)
	if err != nil {
		return 0, 0, err
	}
	cfg, err := inproc.ConfigFor(e, strategy, true)
	if err != nil {
		return 0, 0, err
	}
	o, err := inproc.Run(context.Background(), cfg)
	if err != nil {
		return 0, 0, err
	}
	var emitted int64
	for _, ev := range o.Trace.Events() {
		if ev.Kind == ha.EvStats && ev.Host == "A" {
			emitted = ev.Stats.Tuples
		}
	}
	return o.LastData, emitted, nil
}

func runPeer(n, batch int) (time.Duration, error) {
	e, err := runtimeExperiment(n)
	if err != nil {
		return 0, err
	}
	st, err := strategies.Build("none", nil)
	if err != nil {
		return 0, err
	}
	topo := e.Topology(st)
	var stages [][]ha.Operator
	for _, fr := range topo.Frags {
		ops, err := fr.NewOps()
		if err != nil {
			return 0, err
		}
		stages = append(stages, ops)
	}
	p := inproc.Pipeline{Stages: stages, Batch: batch, Buffer: 64}
	res, err := p.Run(context.Background(), n, inproc.Source(benchRate, 16, e.Seed))
	return res.Wall, err
}

func benchRuntime(size benchSize, add func(row)) error {
	n := size.runtimeN
	var rt, peer1, peerB []float64
	var emitted int64
	for range size.repeat {
		// interleaved, so drifting load on a shared machine hits all three alike
		d, em, err := runInproc(n, "none")
		if err != nil {
			return err
		}
		emitted = em
		rt = append(rt, float64(em)/d.Seconds())
		d, err = runPeer(n, 1000)
		if err != nil {
			return err
		}
		peerB = append(peerB, float64(n)/d.Seconds())
		d, err = runPeer(n, 1)
		if err != nil {
			return err
		}
		peer1 = append(peer1, float64(n)/d.Seconds())
	}
	ratios := make([]float64, len(rt))
	for i := range rt {
		ratios[i] = peerB[i] / rt[i]
	}
	add(row{fmt.Sprintf("in-process runtime, default query, %s tuples", human(float64(emitted))), human(hametrics.Median(rt)) + "tuples/s", "", spread(rt)})
	add(row{"channel pipeline peer, batches of 1000", human(hametrics.Median(peerB)) + "tuples/s", "", spread(peerB)})
	add(row{"channel pipeline peer, one tuple per send", human(hametrics.Median(peer1)) + "tuples/s", "", spread(peer1)})
	add(row{"runtime cost vs batched peer (time ratio)", fmt.Sprintf("%.2f×", hametrics.Median(ratios)), "≤ 2×", spread(ratios)})
	return nil
}

func benchCluster(size benchSize, add func(row)) error {
	var rates []float64
	for range size.repeat {
		r, err := clusterThroughput(context.Background(), size.runtimeN/10)
		if err != nil {
			return err
		}
		rates = append(rates, r)
	}
	add(row{"cluster throughput on loopback", human(hametrics.Median(rates)) + "tuples/s", "", spread(rates)})
	return nil
}

// benchClusterOverhead measures the cluster-mode CPU targets: upstream
// backup's and active standby's process and loop CPU against no HA, as
// medians of paired rounds, at two loads: the default experiment (2000
// tuples/s, loops nearly idle) and the data-plane load (planeRate).
func benchClusterOverhead(size benchSize, add func(row)) error {
	targets := map[string]string{"upstream-backup": "≤ 1.1×", "active-standby": "≤ 2.1×"}
	names := []string{"upstream-backup", "active-standby"}
	def := experiment.Default()
	def.Name = "bench-overhead"
	if err := scaleDuration(def, size.clusterRun); err != nil {
		return err
	}
	loads := []struct {
		what   string
		e      *experiment.Experiment
		rounds int
	}{
		{fmt.Sprintf("default experiment, %s", size.clusterRun), def, size.clusterRounds},
		{fmt.Sprintf("%stuples/s, %s, no spares", human(planeRate), size.planeRun),
			dataPlaneExperiment("bench-plane-overhead", planeRate, size.planeRun), size.planeRounds},
	}
	for _, load := range loads {
		r, err := clusterOverhead(context.Background(), load.e, load.rounds, names)
		if err != nil {
			return fmt.Errorf("cluster overhead (%s): %w", load.what, err)
		}
		for _, run := range r.Runs {
			o := run.Overhead
			if o.CPURatio == nil || o.ProcessCPURatio == nil || o.CPURatioRange == nil || o.ProcessCPURatioRange == nil {
				return fmt.Errorf("cluster overhead (%s): %s: no ratio to the baseline", load.what, run.Strategy)
			}
			add(row{fmt.Sprintf("cluster CPU vs no HA: %s (%s; process, loop)", run.Strategy, load.what),
				fmt.Sprintf("%.2f×, %.2f×", *o.ProcessCPURatio, *o.CPURatio), targets[run.Strategy],
				fmt.Sprintf("process %.2f–%.2f, loop %.2f–%.2f over %d paired rounds",
					o.ProcessCPURatioRange.Min, o.ProcessCPURatioRange.Max, o.CPURatioRange.Min, o.CPURatioRange.Max, o.Rounds)})
		}
	}
	return nil
}
