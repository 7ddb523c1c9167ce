package labs

import (
	"fmt"
	"time"

	"github.com/streamha/streamha/ha"
)

func lab7() *Lab {
	l := &Lab{N: 7, Dir: "07-split-brain", Title: "Split brain",
		Summary: "A pause with an aggressive detector causes a false failover; what the resumed old primary does to the output, with and without fencing.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: with fencing off, will more outputs be missing than with fencing on? (yes or no)"},
			{Key: "q1", Text: "How many ms after the pause began was B declared dead?"},
			{Key: "q2", Text: "Was B really dead? (yes or no)"},
			{Key: "q3", Text: "How many outputs are missing with fencing on (experiment.yaml)?"},
			{Key: "q4", Text: "How many outputs are missing with fencing off (experiment-nofence.yaml)?"},
			{Key: "q5", Text: "With fencing on, how many messages did the hosts drop as coming from a stale epoch?"},
			{Key: "q6", Text: "With fencing off, for how many ms did the sink receive no output (the 'unavail ms' column)?"},
			{Key: "q7", Text: "With fencing off, how many ms after the pause began was the output back for good (the 'recovery ms' column)?"},
			{Key: "q8", Text: "With fencing off, how many of the new primary's outputs did C drop as duplicates (C's dup_dropped)?"},
		}}
	l.check = func(c *ctx) error {
		on, err := l.simulate("experiment.yaml", "amnesia")
		if err != nil {
			return err
		}
		off, err := l.simulate("experiment-nofence.yaml", "amnesia")
		if err != nil {
			return err
		}
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%d missing with fencing, %d without.", on.rec().Missing, off.rec().Missing),
			look:       "when B comes back it still believes it is the primary; what does C do with its messages, with and without the epoch check?",
			confusions: []confusion{mistake("Without fencing C accepts the resumed B's old, high sequence numbers and then drops the new primary's lower ones as duplicates.", "no")}},
			[]string{yesNo(off.rec().Missing > on.rec().Missing)})
		det := ptrMs(on.rec().DetectionMs)
		c.number(spec{key: "q1", evidence: "From the pause event to the first detect event of B.", look: "the 'detect ms' column.",
			confusions: distinctMixUps(det, 0, 1, append([]confusion{mixUp(400, "That is how long B was paused; detection came much earlier.")},
				detectionConfusions(on, "B", faultTime(on, ha.EvPause))...)...)}, det, 0, 1, "ms")
		var pause time.Duration
		for _, e := range on.sr.Trace.Events() {
			if e.Kind == ha.EvPause {
				pause = time.Duration(e.N)
				break
			}
		}
		c.choice(spec{key: "q2", evidence: fmt.Sprintf("B was paused for %s and declared dead after %.1f ms: a false failover (the trace has a resume event for B and no crash).", pause, det),
			look: "look for crash, pause and resume events in the trace."}, []string{"no"})
		var confs3 []confusion
		if on.rec().Missing != off.rec().Missing {
			confs3 = append(confs3, mixUp(float64(off.rec().Missing), "That is the run without fencing (experiment-nofence.yaml); q3 asks about experiment.yaml."))
		}
		c.number(spec{key: "q3", evidence: fmt.Sprintf("With fencing: %s, missing %s.", on.label(), list(on.cls.MissingIDs, 5)), look: "the 'missing' column for experiment.yaml.", confusions: append(confs3, moreConfusions(on)...)},
			float64(on.rec().Missing), 0, 0, "")
		dupC := hostStat(off.sr.Trace, "C", func(s *ha.NodeStats) int64 { return s.Duplicates })
		var confs4 []confusion
		if on.rec().Missing != off.rec().Missing {
			confs4 = append(confs4, mixUp(float64(on.rec().Missing), "That is the run with fencing (experiment.yaml); q4 asks about experiment-nofence.yaml."))
		}
		c.number(spec{key: "q4", evidence: fmt.Sprintf("Without fencing: %s, missing %s. The resumed B kept sending with its old, higher sequence numbers; C accepted them and then dropped the new primary's output as duplicates (dup_dropped %d).", off.label(), list(off.cls.MissingIDs, 5), dupC),
			look: "the 'missing' column for experiment-nofence.yaml.", probe: "streamha why --missing --run lab7-nofence", confusions: append(confs4, moreConfusions(off)...)},
			float64(off.rec().Missing), 0, 0, "")
		stale := stat(on.sr.Trace, func(s *ha.NodeStats) int64 { return s.Fenced })
		events, lines := fencedLines(on.sr.Trace)
		c.number(spec{key: "q5", evidence: "Sum of fenced_dropped over the hosts' stats events.", look: "sum fenced_dropped in the stats events of trace-amnesia.jsonl (grep '\"stats\"'), or count the fenced events' n.",
			confusions: distinctMixUps(float64(stale), 0, 0,
				mixUp(float64(events), "That counts every fenced event, B's own 'superseded by a newer epoch' too; only the receivers' drops ('dropped data from a stale epoch') count."),
				mixUp(float64(lines), "That counts every line with \"fenced\": B's 'superseded' event and B's stats (role fenced) too; only the receivers' drops count: their fenced_dropped."))},
			float64(stale), 0, 0, "messages")
		c.number(spec{key: "q6", evidence: fmt.Sprintf("Without fencing the sink waited %.1f ms; with fencing %.1f ms.", off.rec().UnavailableMs, on.rec().UnavailableMs), look: "the 'unavail ms' column.",
			confusions: []confusion{mixUp(on.rec().UnavailableMs, "That is the run with fencing.")}}, off.rec().UnavailableMs, 0.02, 1, "ms")
		if off.rec().RecoveryMs == nil {
			c.add("q7", false, "the run without fencing never recovered before it ended, so there is no moment to give: tell your teacher, the lab's experiment should run long enough")
		} else {
			c.number(spec{key: "q7", evidence: fmt.Sprintf("Output was back for good %.1f ms after the pause began, once B.1's numbering passed the last seq C had accepted from the resumed B.", *off.rec().RecoveryMs),
				look: "the 'recovery ms' column of experiment-nofence.yaml.", probe: "streamha why --missing --run lab7-nofence",
				confusions: []confusion{mixUp(off.rec().UnavailableMs, "That is the longest silence ('unavail ms'); recovery runs from the pause until the output is back for good."),
					mixUp(float64(pause/time.Millisecond), "That is when the resumed B came back; C then accepted B's stale output and dropped B.1's.")}},
				*off.rec().RecoveryMs, 0.02, 1, "ms")
		}
		var confs8 []confusion
		if int64(off.rec().Missing) != dupC {
			confs8 = append(confs8, mixUp(float64(off.rec().Missing), "That is the number of missing outputs, which is not what C counted as duplicates: some of B.1's drops were of outputs the resumed B had delivered."))
		}
		confs8 = append(confs8, mixUp(float64(stat(off.sr.Trace, func(s *ha.NodeStats) int64 { return s.InputGaps })), "That is input_gaps, the seqs C never received; the question asks for dup_dropped."))
		c.number(spec{key: "q8", evidence: fmt.Sprintf("C's stats event says dup_dropped %d in the run without fencing.", dupC),
			look: "the stats event of host C in trace-amnesia.jsonl of the run without fencing (dup_dropped).", probe: "streamha why --missing --run lab7-nofence",
			confusions: confs8}, float64(dupC), 0, 0, "")
		return nil
	}
	return l
}
