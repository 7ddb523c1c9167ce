package strategies

import (
	"github.com/streamha/streamha/ha"
)

// Recovery levels a strategy can promise, strongest first
// (docs/semantics.md). A promise is a lower bound: a strategy promising
// Convergent keeps its promise with a precise, repeating or convergent
// recovery.
const (
	Precise    = "precise"
	Repeating  = "repeating"
	Convergent = "convergent"
	Divergent  = "divergent"
	Rollback   = "rollback" // any rollback: repeating, convergent or divergent
	Gap        = "gap"
)

// Levels lists the recovery levels, strongest first.
var Levels = []string{Precise, Repeating, Convergent, Divergent, Rollback, Gap}

// Promise is what a strategy promises about recovery. The soak
// (streamha soak), the cluster's chaos check, the conformance suite
// (strategies/conformance) and the docs read it from the registry; a
// strategy without one promises nothing and is held only to the invariants
// every strategy keeps.
type Promise struct {
	// Precise reports whether the strategy, with parameters p, promises
	// precise recovery on a query of class c while the faults stay within
	// the fault model (docs/reliability.md); why says why not. On an
	// arbitrary (union) query, precise means no missing, duplicate or
	// spurious output and no lost input: values may differ, since input the
	// failed primary never processed is legitimately interleaved anew.
	Precise func(c ha.Class, p Params) (ok bool, why string)
	// NoAdjacentFailures narrows the fault model of Precise: adjacent
	// fragments never both fail in one run. Upstream backup needs it, as it
	// keeps each fragment's backup on its upstream neighbour.
	NoAdjacentFailures bool
	// Claims are what the conformance suite holds the strategy to, one
	// entry per parameter set: the weakest recovery per query class under
	// the suite's fault schedules.
	Claims []Claims
	// QueueBound is the largest output queue (tuples) a host may retain
	// with parameters p, and what the bound is; ok false means no bound
	// beyond the general one (the tuples the sources emitted). The soak
	// checks it.
	QueueBound func(p Params) (bound int64, what string, ok bool)
}

// Claims are what a strategy promises per query class under the
// conformance suite's fault schedules (strategies/conformance, which checks
// them). An empty claim checks only the invariants.
type Claims struct {
	Repeatable, Convergent, Deterministic, Arbitrary string
	// StateLost is the claim for the schedules that fail every host holding
	// a fragment's state (conformance.Fault.StateLost); "" checks the invariants only.
	StateLost string
	// Schedules refine the claims per fault schedule (conformance.Fault.Name → claim
	// for every query class), e.g. precise for a short partition that no
	// failover follows. They take precedence over StateLost.
	Schedules map[string]string
	// Cases refine the claims per case ("arbitrary/crash-first" → claim);
	// they take precedence over everything else.
	Cases map[string]string
	// Exact makes every claim an equality: the observed recovery must be
	// of the claimed level, not merely as good.
	Exact bool
	// Params are the strategy parameters used for every case (as in YAML).
	Params map[string]any
	// Known lists documented findings: case name ("arbitrary/crash-first")
	// → why the claim does not hold yet. Such a case is reported but does
	// not fail; if it starts passing, the report says the note is stale.
	Known map[string]string
}

// PreciseExpected reports whether strategy name, with raw parameters,
// promises precise recovery on a query of class c within the fault model,
// and if not, why: a strategy with no Promise.Precise promises nothing.
func PreciseExpected(name string, c ha.Class, raw map[string]any) (ok bool, why string) {
	info, err := Lookup(name)
	if err != nil {
		return false, err.Error()
	}
	if info.Promise.Precise == nil {
		return false, name + " does not promise precise recovery"
	}
	p, err := info.Parse(raw)
	if err != nil {
		return false, err.Error()
	}
	return info.Promise.Precise(c, p)
}
