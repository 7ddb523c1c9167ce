package labs

import (
	"fmt"
	"math"
	"strings"
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
			{Key: "p1", Predict: true, Text: "Before you run: will global-checkpoint's restart take longer with 12 fragments than with 3? (yes or no)"},
			{Key: "q1", Text: "In chain-3.yaml, how many hosts restored a checkpoint in global-checkpoint's run?"},
			{Key: "q2", Text: "In chain-12.yaml, how many of the hosts that restored a checkpoint in global-checkpoint's run had not failed (restored in place)?"},
			{Key: "q3", Text: "Restart time of global-checkpoint in chain-3.yaml, in ms?"},
			{Key: "q4", Text: "Restart time of global-checkpoint in chain-12.yaml, in ms?"},
			{Key: "q5", Text: "Restart time of global-checkpoint in chain-12-small.yaml, in ms?"},
			{Key: "q6", Text: "Restart time of passive-standby in chain-12.yaml, in ms?"},
			{Key: "q7", Text: "How many outputs did global-checkpoint (at-least-once) deliver twice in chain-3.yaml?"},
			{Key: "q8", Text: "Largest added latency of global-checkpoint with the transactional sink in transactional.yaml, in ms?"},
		}}
	l.check = func(c *ctx) error {
		// One comparison per chain runs the reference once for both strategies.
		runs := map[string]*sim.StrategyRun{}
		for _, file := range []string{"chain-3.yaml", "chain-12.yaml", "chain-12-small.yaml"} {
			cmp, err := memoized(l.Dir+"/"+file+"/global-checkpoint,passive-standby", func() (*sim.Comparison, error) {
				e, err := l.experiment(file)
				if err != nil {
					return nil, err
				}
				return sim.Compare(e, []string{"global-checkpoint", "passive-standby"})
			})
			if err != nil {
				return err
			}
			for i := range cmp.Runs {
				runs[file+"/"+cmp.Runs[i].Run.Strategy] = &cmp.Runs[i]
			}
		}
		restart := func(file, st string) (float64, string) {
			d, from, to, _ := metrics.Restart(runs[file+"/"+st].Trace)
			return float64(d) / float64(time.Millisecond),
				fmt.Sprintf("From the crash at %s to the last caught_up at %s in %s's run of %s.", from, to, st, file)
		}
		gc3, _ := restart("chain-3.yaml", "global-checkpoint")
		gc12, _ := restart("chain-12.yaml", "global-checkpoint")
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%.1f ms with 3 fragments, %.1f ms with 12.", gc3, gc12),
			look:       "the restart times of global-checkpoint you measure for q3 and q4 (the last caught_up event minus the crash).",
			confusions: []confusion{mistake("Passive standby's restart does not grow; a global rollback restarts all fragments.", "no")}},
			[]string{yesNo(gc12 > gc3)})
		look := "grep '\"restore\"' in trace-global-checkpoint.jsonl."
		n3, hosts3 := lab8Restores(runs["chain-3.yaml/global-checkpoint"].Trace)
		c.number(spec{key: "q1", evidence: fmt.Sprintf("The restore events are on %v: every fragment restarts, not only the failed one.", hosts3), look: look,
			confusions: []confusion{mixUp(1, "Only the failed fragment? That is passive standby; global checkpointing restarts every fragment.")}},
			float64(n3), 0, 0, "hosts")
		n12, hosts12 := lab8Restores(runs["chain-12.yaml/global-checkpoint"].Trace)
		inPlace := 0
		for _, h := range hosts12 {
			if !strings.Contains(h, ".") { // F6.1 is F6's spare
				inPlace++
			}
		}
		c.number(spec{key: "q2", evidence: fmt.Sprintf("The restore events are on %v: the failed fragment restarts on its spare, the %d others in place.", hosts12, inPlace), look: look,
			confusions: []confusion{mixUp(float64(n12), "That counts every restore; the failed fragment restarted on its spare, not in place."),
				mixUp(0, "Every fragment rolls back, including the ones whose host did not fail.")}},
			float64(inPlace), 0, 0, "hosts")
		restartLook := "t of the last caught_up event minus t of the crash event, in ms (t is in ns)."
		restarts := []struct{ key, file, st string }{
			{"q3", "chain-3.yaml", "global-checkpoint"},
			{"q4", "chain-12.yaml", "global-checkpoint"},
			{"q5", "chain-12-small.yaml", "global-checkpoint"},
			{"q6", "chain-12.yaml", "passive-standby"},
		}
		for _, q := range restarts {
			ms, ev := restart(q.file, q.st)
			rec := runs[q.file+"/"+q.st].Run.Recovery
			var confs []confusion
			if rec.RecoveryMs != nil {
				confs = append(confs, mixUp(*rec.RecoveryMs, "That is the 'recovery ms' column, which also waits for the sink's latency to settle; the restart ends at the last caught_up."))
			}
			// A restart of another run of the lab: the files or the
			// strategies swapped.
			for _, o := range restarts {
				if other, _ := restart(o.file, o.st); o.key != q.key && math.Abs(other-ms) > max(1, ms*0.01) {
					confs = append(confs, mixUp(other, fmt.Sprintf("That is the restart of %s in %s (%s); %s asks for %s in %s.", o.st, o.file, o.key, q.key, q.st, q.file)))
				}
			}
			c.number(spec{key: q.key, evidence: ev, look: restartLook, confusions: confs}, ms, 0.01, 1, "ms")
		}
		dup := runs["chain-3.yaml/global-checkpoint"].Run.Recovery.Duplicates
		c.number(spec{key: "q7", evidence: "The 'dup' column of global-checkpoint for chain-3.yaml: the outputs delivered between the restored checkpoint and the rollback.",
			look: "the 'dup' column."}, float64(dup), 0, 0, "outputs")
		tx, err := l.simulate("transactional.yaml", "global-checkpoint")
		if err != nil {
			return err
		}
		c.number(spec{key: "q8", evidence: fmt.Sprintf("Outputs wait for the next completed checkpoint (every 500 ms), longer around the rollback; the recovery is %s.", tx.label()),
			look:       "the '+latency ms' column.",
			confusions: []confusion{mixUp(500, "That is one checkpoint interval: the outputs just before the crash wait for the first checkpoint after the rollback.")}},
			tx.rec().MaxAddedLatencyMs, 0.02, 1, "ms")
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
