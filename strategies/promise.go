package strategies

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
	Rollback   = "rollback"
	Gap        = "gap"
)

// Levels lists the recovery levels, strongest first.
var Levels = []string{Precise, Repeating, Convergent, Rollback, Gap}

// ErrClaim is returned (wrapped) for a claim that is not one of Levels.
var ErrClaim = errors.New("conformance: bad claim")

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
// conformance suite's fault schedules. An empty claim checks only the
// invariants.
type Claims struct {
	Repeatable, Convergent, Deterministic, Arbitrary string
	// StateLost is the claim for the schedules that fail every host holding
	// a fragment's state; "" checks the invariants only.
	StateLost string
	// Params are the strategy parameters used for every case (as in YAML).
	Params map[string]any
	// Known lists documented findings: case name ("arbitrary/crash-first")
	// → why the claim does not hold yet. Such a case is reported but does
	// not fail; if it starts passing, the report says the note is stale.
	Known map[string]string
}

// ClaimFor is the claim for a query of class cl.
func (c Claims) ClaimFor(cl ha.Class) string {
	switch cl {
	case ha.Repeatable:
		return c.Repeatable
	case ha.ConvergentCapable:
		return c.Convergent
	case ha.Deterministic:
		return c.Deterministic
	}
	return c.Arbitrary
}

// Validate checks that every claim is one of Levels (or empty).
func (c Claims) Validate() error {
	for _, v := range []string{c.Repeatable, c.Convergent, c.Deterministic, c.Arbitrary, c.StateLost} {
		if v != "" && !slices.Contains(Levels, v) {
			return fmt.Errorf("%w %q (want one of %s)", ErrClaim, v, strings.Join(Levels, ", "))
		}
	}
	return nil
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
