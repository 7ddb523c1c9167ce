package labs

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/sim"
)

// lab8 is "Global or local recovery?": global-checkpoint's restart time
// grows with the job's fragments and state, passive standby's does not,
// and a transactional sink costs latency.
func lab8() *Lab {
	l := &Lab{N: 8, Dir: "08-global-or-local", Title: "Global or local recovery?",
		Summary: "Global rollback against passive standby as the chain and its state grow; the latency of a transactional sink.",
		Questions: []Question{
			{"q1", "In chain-3.yaml, how many hosts restored a checkpoint in global-checkpoint's run?"},
			{"q2", "In chain-12.yaml, how many hosts restored a checkpoint in global-checkpoint's run?"},
			{"q3", "Restart time of global-checkpoint in chain-3.yaml, in ms?"},
			{"q4", "Restart time of global-checkpoint in chain-12.yaml, in ms?"},
			{"q5", "Restart time of global-checkpoint in chain-12-small.yaml, in ms?"},
			{"q6", "Restart time of passive-standby in chain-12.yaml, in ms?"},
			{"q7", "How many outputs did global-checkpoint (at-least-once) deliver twice in chain-3.yaml?"},
			{"q8", "Largest added latency of global-checkpoint with the transactional sink in transactional.yaml, in ms?"},
		}}
	l.check = func(c *ctx) error {
		// One comparison per chain runs the reference once for both strategies.
		runs := map[string]*sim.StrategyRun{}
		for _, file := range []string{"chain-3.yaml", "chain-12.yaml", "chain-12-small.yaml"} {
			e, err := l.experiment(file)
			if err != nil {
				return err
			}
			cmp, err := sim.Compare(e, []string{"global-checkpoint", "passive-standby"})
			if err != nil {
				return err
			}
			for i := range cmp.Runs {
				runs[file+"/"+cmp.Runs[i].Run.Strategy] = &cmp.Runs[i]
			}
		}
		hint := "grep '\"restore\"' in the trace of global-checkpoint."
		for _, q := range []struct{ key, file string }{{"q1", "chain-3.yaml"}, {"q2", "chain-12.yaml"}} {
			n, hosts := lab8Restores(runs[q.file+"/global-checkpoint"].Trace)
			c.number(q.key, float64(n), 0, 0, "hosts", fmt.Sprintf("The restore events are on %v: every fragment restarts, not only the failed one.", hosts), hint)
		}
		restart := func(key, file, st string) {
			d, from, to, _ := metrics.Restart(runs[file+"/"+st].Trace)
			c.number(key, float64(d)/float64(time.Millisecond), 0.01, 1, "ms", fmt.Sprintf("From the crash at %s to the last caught_up at %s in %s's run of %s.", from, to, st, file),
				"t of the last caught_up event minus t of the crash event, in ms.")
		}
		restart("q3", "chain-3.yaml", "global-checkpoint")
		restart("q4", "chain-12.yaml", "global-checkpoint")
		restart("q5", "chain-12-small.yaml", "global-checkpoint")
		restart("q6", "chain-12.yaml", "passive-standby")
		dup := runs["chain-3.yaml/global-checkpoint"].Run.Recovery.Duplicates
		c.number("q7", float64(dup), 0, 0, "outputs", "The 'dup' column of global-checkpoint for chain-3.yaml: the outputs delivered between the restored checkpoint and the rollback.",
			"the 'dup' column.")
		tx, err := l.simulate("transactional.yaml", "global-checkpoint")
		if err != nil {
			return err
		}
		c.number("q8", tx.rec().MaxAddedLatencyMs, 0.02, 1, "ms",
			fmt.Sprintf("Outputs wait for the next completed checkpoint (every 500 ms), longer around the rollback; the recovery is %s.", tx.label()),
			"the '+latency ms' column.")
		return nil
	}
	return l
}

// lab8Restores counts the restore events of a trace and names their hosts.
func lab8Restores(tr *ha.Trace) (int, []string) {
	var hosts []string
	for e := range tr.All() {
		if e.Kind == ha.EvRestore {
			hosts = append(hosts, e.Host)
		}
	}
	return len(hosts), hosts
}
