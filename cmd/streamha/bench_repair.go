package main

import (
	"fmt"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	hametrics "github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
	"github.com/streamha/streamha/strategies"
)

// benchRepair measures, in the same invocation, what the repair machinery
// of docs/reliability.md (gap repair, tail markers, resume retries, route
// seeking) costs a failure-free run of the default experiment under every
// strategy: simulated messages, bytes and CPU with it over without it, and
// the simulator's wall time likewise.
func benchRepair(size benchSize, add func(row)) error {
	e := experiment.Default()
	for _, name := range strategies.Names(false) {
		st, err := strategies.Build(name, e.ParamsFor(name))
		if err != nil {
			return err
		}
		on, err := sim.ConfigFor(e, st, true)
		if err != nil {
			return err
		}
		off := on
		off.NoRepair = true
		var wall []float64
		var with, without runTotals
		for i := range size.repeat {
			w, err := timed(1, func() error { out, err := sim.Run(on); with = totalsOf(traceOf(out)); return err })
			if err != nil {
				return err
			}
			b, err := timed(1, func() error { out, err := sim.Run(off); without = totalsOf(traceOf(out)); return err })
			if err != nil {
				return err
			}
			if i > 0 || size.repeat == 1 {
				wall = append(wall, w[0].Seconds()/b[0].Seconds())
			}
		}
		add(row{"repair machinery, failure-free: " + name,
			fmt.Sprintf("with/without: messages %.4f×, bytes %.4f×, simulated CPU %.4f×; simulator wall %.2f×",
				ratioOf(with.msgs, without.msgs), ratioOf(with.bytes, without.bytes), ratioOf(with.cpu, without.cpu), hametrics.Median(wall)),
			"within 2 % (1.02×)", "wall " + spread(wall)})
	}
	return nil
}

// runTotals are a run's messages, bytes, simulated CPU and tuple events
// (tuples a fragment processed or the sink received) over all hosts, from
// their end-of-run counters.
type runTotals struct{ msgs, bytes, cpu, tuples int64 }

func totalsOf(trace *ha.Trace) runTotals {
	var t runTotals
	if trace == nil {
		return t
	}
	for _, ev := range trace.Events() {
		if ev.Kind == ha.EvStats && ev.Stats != nil {
			t.msgs += ev.Stats.Messages
			t.bytes += ev.Stats.Bytes
			t.cpu += ev.Stats.CPU
			t.tuples += ev.Stats.Tuples
		}
	}
	return t
}

// traceOf is out's trace, nil for a failed run.
func traceOf(out *sim.Outcome) *ha.Trace {
	if out == nil {
		return nil
	}
	return out.Trace
}

func ratioOf(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
