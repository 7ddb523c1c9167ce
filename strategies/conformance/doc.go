// Package conformance is the strategy conformance suite: it runs any
// registered strategy — a built-in one or a student's — over a matrix of
// queries (one per operator class) and fault schedules in the simulator and
// checks the recovery contract of docs/semantics.md against the strategy's claims,
// plus the invariants every strategy must keep whatever it claims.
//
// Use it from a test, like etcd's rafttest:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, "passive-standby", conformance.Claims{
//			Repeatable: conformance.Precise, Convergent: conformance.Precise,
//			Deterministic: conformance.Precise, Arbitrary: conformance.Rollback,
//		})
//	}
//
// or from a tool with Check, which returns a Report.
//
// A claim is a lower bound on quality, in the order precise > repeating >
// convergent > divergent or rollback (any subtype, no input lost) > gap: a
// strategy claiming convergent passes with a precise, repeating or
// convergent recovery. With Claims.Exact a claim is what the strategy
// achieves: the recovery must be of that level (rollback: of any
// subtype), so a strategy that does better than it claims fails too, and
// a claim of gap is checked. Claims per class can be refined per fault
// schedule (Claims.Schedules) and per case (Claims.Cases). The invariants are: the run returns without panicking, a second
// run with the same seed gives an identical trace, output resumes after the
// faults (the last output comes at most resumeSlack before the failure-free
// run's), the run never reports more lost inputs than the sources emitted,
// and the strategy's work stays bounded (at most MaxEventFactor times the
// events of the no-HA run).
package conformance
