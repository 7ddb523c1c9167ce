package labs

import (
	"fmt"
	"strings"

	"github.com/streamha/streamha/strategies"
	"github.com/streamha/streamha/strategies/conformance"
)

// Lab5Strategy is the name the lab-5 skeleton registers.
const Lab5Strategy = "my-strategy"

// Lab5Claims are the claims the completed lab-5 strategy must meet.
var Lab5Claims = conformance.Claims{
	Repeatable: conformance.Precise, Convergent: conformance.Precise,
	Deterministic: conformance.Precise, Arbitrary: conformance.Gap,
}

func lab5() *Lab {
	l := &Lab{N: 5, Dir: "05-own-strategy", Title: "Write your own strategy",
		Summary: "Complete the skeleton strategy package; the check runs the conformance suite and classifies its recovery.",
		Questions: []Question{
			{Key: "p1", Predict: true, Text: "Before you run: will your completed strategy deliver any duplicate on the lab's experiment? (yes or no)"},
			{Key: "q1", Text: "Which recovery does your strategy achieve on the lab's experiment?"},
			{Key: "q2", Text: "How many tuples did A replay to the new B after the crash?"},
			{Key: "q3", Text: "What is the peak output-queue length (tuples, the 'peak queue' column) of your strategy?"},
			{Key: "q4", Text: "Which recovery does your strategy get in the conformance case arbitrary/crash-first?"},
		}}
	l.check = func(c *ctx) error {
		if _, err := strategies.Lookup(Lab5Strategy); err != nil {
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("strategy %q is not registered: this program does not import your package (the streamha command does, in cmd/streamha/lab_strategies.go) (%v)", Lab5Strategy, err))
			for _, q := range l.Questions {
				c.add(q.Key, false, "cannot be checked without the strategy.")
			}
			return nil
		}
		rep, err := conformance.Check(Lab5Strategy, Lab5Claims)
		if err != nil {
			return err
		}
		var b strings.Builder
		rep.Write(&b)
		c.res.Notes = append(c.res.Notes, strings.TrimRight(b.String(), "\n"))
		if !rep.Passed() {
			var names []string
			for _, f := range rep.Failed() {
				names = append(names, f.Name)
			}
			c.res.Failed = append(c.res.Failed, fmt.Sprintf("the conformance suite failed %d of %d cases (%s); claims: precise for repeatable, convergent-capable and deterministic queries, only the invariants for arbitrary ones", len(names), len(rep.Cases), strings.Join(names, ", ")))
		}
		r, err := l.simulate("experiment.yaml", Lab5Strategy)
		if err != nil {
			return err
		}
		rec := r.rec()
		c.choice(spec{key: "p1", evidence: fmt.Sprintf("Your strategy delivered %d duplicates.", rec.Duplicates),
			look:       "the 'dup' column of your run (lab5-out), and C's dup_dropped in the stats events of lab5-out/trace-my-strategy.jsonl.",
			confusions: []confusion{mistake("The restarted node re-creates the old sequence numbers, so the downstream drops what it already has as duplicates (dup_dropped).", "yes")}},
			[]string{yesNo(rec.Duplicates > 0)})
		c.choice(spec{key: "q1", evidence: fmt.Sprintf("The classifier says %s: %d missing, %d duplicates, %d wrong, %d lost inputs.", r.label(), rec.Missing, rec.Duplicates, rec.Wrong, rec.LostInputs),
			look: "run the lab's experiment with your strategy.", confusions: recoveryConfusions(rec.Type, rec.Subtype)},
			recoveryAnswers(rec.Type, rec.Subtype))
		peak := float64(r.sr.Run.Overhead.PeakQueue)
		replayed := float64(r.replayed("A"))
		c.number(spec{key: "q2", evidence: "From the replay_start events of host A.", look: "grep replay_start in the trace of your strategy (its n field).",
			confusions: []confusion{mixUp(peak, "That is the peak queue (q3), the most any host held in the failure-free run; q2 counts what A replayed after the crash.")}},
			replayed, 0, 0, "tuples")
		c.number(spec{key: "q3", evidence: "Peak retained output tuples over all hosts in the failure-free run.", look: "the 'peak queue' column.",
			confusions: []confusion{mixUp(replayed, "That is what A replayed after the crash (q2); the peak queue is the most any host held in the failure-free run.")}}, peak, 0.02, 1, "tuples")
		found := false
		for _, k := range rep.Cases {
			if k.Name == "arbitrary/crash-first" {
				found = true
				why := "the restarted union merges its two replayed inputs in event-time order, not in the order the failed primary saw them, so the sums after it differ until both orders have included the same tuples again"
				confusions := recoveryConfusions(k.Type, k.Subtype)
				if k.Type == "gap" {
					why = "the restarted union re-interleaves its two inputs, and the downstream's seq filter drops new outputs whose seq it already saw although they carry different tuples"
					confusions = append(confusions, mistake("Nothing was lost upstream, but look at the case's lost inputs: the seq filter dropped new outputs whose seqs the old ones had used.", "rollback"))
				} else {
					confusions = append(confusions, mistake("Nothing is lost, but the case is not identical to the failure-free run either: look at its wrong outputs, then at whether the last outputs agree again.", "precise"))
				}
				c.choice(spec{key: "q4", evidence: fmt.Sprintf("The suite got %s (missing %d, wrong %d, lost inputs %d): %s.", k.Label(), k.Recovery.Missing, k.Recovery.Wrong, k.Recovery.LostInputs, why),
					look: "the conformance table printed above.", confusions: confusions},
					recoveryAnswers(k.Type, k.Subtype))
			}
		}
		if !found {
			// never let a question vanish: AllRight would then ignore it
			c.add("q4", false, "the conformance suite ran no arbitrary/crash-first case, so this answer cannot be checked")
		}
		return nil
	}
	return l
}
