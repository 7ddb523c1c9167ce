package labs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamha/streamha/ha/classify"
)

func lab2() *Lab {
	l := &Lab{N: 2, Dir: "02-precise-vs-repeating", Title: "Precise vs repeating",
		Summary: "Upstream backup with and without duplicate elimination; what the replay after a crash delivers.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: without dedup, will the sink receive some output twice? (yes or no)"},
			{Key: "q1", Text: "Which recovery does upstream backup achieve without dedup (experiment.yaml)?"},
			{Key: "q2", Text: "How many duplicate outputs reached the sink?"},
			{Key: "q3", Text: "Which is the oldest source tuple (lowest sN:M) whose output reached the sink twice?"},
			{Key: "q4", Text: "How many tuples did A replay to the new B after the crash?"},
			{Key: "q5", Text: "Which recovery does it achieve with dedup: true (experiment-dedup.yaml)?"},
		}}
	l.check = func(c *ctx) error {
		r, err := l.simulate("experiment.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		rec := r.rec()
		replayed := r.replayed("A")
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("%d outputs reached the sink twice.", rec.Duplicates),
			look:       "the 'dup' column of the run of experiment.yaml, and the duplicates in lab2-out/anomalies-upstream-backup.jsonl.",
			confusions: []confusion{mistake("The replay re-sends tuples whose outputs the sink already had; without dedup nothing removes them.", "no")}},
			[]string{yesNo(rec.Duplicates > 0)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s with %d duplicates, %d missing and %d wrong.", r.label(), rec.Duplicates, rec.Missing, rec.Wrong),
			look: "the recovery column for experiment.yaml.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		dups := r.statusIDs(classify.StatusDuplicate)
		c.number(spec{key: "q2", evidence: "Duplicates: " + list(dups, 6) + ".", look: "the 'dup' column.", probe: "streamha why --first-duplicate --run lab2-out",
			confusions: append([]confusion{mixUp(float64(replayed), "That is the whole replay; duplicates are only the replayed tuples whose outputs the sink already had: those A sent between its last trim before the crash (the trim events of host A) and the crash. What A sent B after the crash had never reached the sink.")}, moreConfusions(r)...)},
			float64(rec.Duplicates), 0, 0, "")
		oldest := lab2Oldest(dups)
		// A bare tuple number is read as the source id the explanations
		// print ("3098" as "s0:3098"), as lab 1 reads "3" as "3s".
		for i, a := range c.answers["q3"] {
			c.answers["q3"][i] = sourceIDOf(a, dups)
		}
		if oldest == "" {
			c.choice(spec{key: "q3", evidence: "No output was delivered twice."}, []string{"none"})
		} else {
			c.choice(spec{key: "q3", evidence: fmt.Sprintf("The duplicated outputs are %d consecutive source tuples from %s on: the first tuple after the last acknowledgement that reached A before the crash.", len(dups), oldest),
				look: "the ids of the 'emitted twice' explanations are source ids sN:M; the oldest is the lowest M.", probe: "streamha why --first-duplicate --run lab2-out"},
				[]string{oldest})
		}
		c.number(spec{key: "q4", evidence: "From the replay_start events of host A in the trace.", look: "grep replay_start in trace-upstream-backup.jsonl (its n field).",
			confusions: distinctMixUps(float64(replayed), 0, 0,
				mixUp(float64(rec.Duplicates), "That is the number of duplicates; the replay also re-sent tuples whose outputs the sink had not received yet."),
				mixUp(float64(r.replayFrom("A")), "That is the position the replay starts from ('replays to B.1 from seq …' in streamha why), not how many tuples it sent: the replay_start event's n counts them."))},
			float64(replayed), 0, 0, "tuples")
		d, err := l.simulate("experiment-dedup.yaml", "upstream-backup")
		if err != nil {
			return err
		}
		c.choice(spec{key: "q5", evidence: fmt.Sprintf("With dedup the classifier says %s (%d duplicates).", d.label(), d.rec().Duplicates), look: "rerun with experiment-dedup.yaml.",
			confusions: recoveryConfusions(d.rec().Type, d.rec().Subtype)},
			recoveryAnswers(d.rec().Type, d.rec().Subtype))
		return nil
	}
	return l
}

// lab2Oldest is the source id with the lowest number among ids ("" when none).
func lab2Oldest(ids []string) string {
	best, bestN := "", int64(-1)
	for _, id := range ids {
		_, num, ok := strings.Cut(id, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err == nil && (bestN < 0 || n < bestN) {
			best, bestN = id, n
		}
	}
	return best
}
