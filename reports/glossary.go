package reports

import (
	"slices"
	"strings"

	"github.com/streamha/streamha/ha/metrics"
)

// Term is one entry of the glossary: a column or verdict and what it means.
type Term struct {
	Name, Meaning string
}

// Glossary explains every column of the comparison table and every
// verdict, in the words of docs/semantics.md. Reports show it under the
// table and `streamha run --help` prints it.
var Glossary = []Term{
	{"precise", "the output equals the failure-free output; the failure shows only as latency"},
	{"rollback/repeating", "no input lost; the only difference is extra copies of outputs already delivered"},
	{"rollback/convergent", "no input lost; some outputs differ after the failure, then the output is identical again"},
	{"rollback/divergent", "no input lost, but the output never becomes identical again (e.g. a re-interleaved union)"},
	{"gap", "some input lost: outputs missing, or reflecting fewer source tuples than without the failure"},
	{"not recovered by end of run (N outstanding)", "the run ended while the strategy was still catching up; N outputs had not arrived yet (lengthen drain)"},
	{"missing", "expected outputs never delivered"},
	{"dup", "repeat deliveries of an identical output"},
	{"wrong", "outputs delivered with another value or lineage count"},
	{"lost in", "distinct source tuples whose effect never reached the output (at most the tuples emitted)"},
	{"detect ms", "fault → the first node declares the failed node dead"},
	{"recovery ms", recoveryMeaning + "; \"not recovered (> T s)\" when that never happened before the run ended, T after the fault"},
	{"+latency ms", "largest added latency of an output against the failure-free run"},
	{"unavail ms", "longest interval without output beyond the normal inter-output gap"},
	{"cpu×, proc cpu×", "processing time (node loops; real runs: whole processes) against the no-HA run, failure-free"},
	{"bytes×, msgs×", "bytes and messages sent against the no-HA run, failure-free"},
	{"peak queue", "largest output queue or log any node held (tuples)"},
}

// recoveryMeaning is what the recovery time measures.
const recoveryMeaning = "per fault episode, its start → the last output of the episode that arrived later than in the strategy's own failure-free run (plus the tolerance), never before its detection; the worst episode, with the number of episodes when several: \"224.2 (2)\""

// GlossaryText is the glossary as indented lines for help output.
func GlossaryText() string {
	var b strings.Builder
	for _, t := range Glossary {
		b.WriteString("  " + t.Name + ": " + t.Meaning + "\n")
	}
	return b.String()
}

// runGlossary is the glossary as a report shows it under a run's table:
// the recovery time's entry with the run's own numbers — how long after
// the fault each strategy that did not recover was observed — instead of
// a placeholder.
func runGlossary(runs []metrics.Run) []Term {
	var late []string
	for _, r := range runs {
		if r.Recovery.NotRecovered {
			late = append(late, r.Strategy+": "+r.Recovery.RecoveryText())
		}
	}
	out := slices.Clone(Glossary)
	for i, g := range out {
		if g.Name != "recovery ms" {
			continue
		}
		switch {
		case len(late) > 0:
			out[i].Meaning = recoveryMeaning + "; when that never happened before the run ended, \"not recovered\" and how long after the fault the run was observed (here " + strings.Join(late, "; ") + ")"
		default:
			out[i].Meaning = recoveryMeaning + " (every strategy of this run that saw a fault recovered; one that does not shows \"not recovered\" and how long after the fault the run was observed)"
		}
	}
	return out
}
