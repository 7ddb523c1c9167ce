package sim

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// Soak invariants (docs/reliability.md defines each one).
const (
	// InvPanic: the run (simulator, node, strategy or metrics) must not panic
	// nor fail to start.
	InvPanic = "no-panic"
	// InvLivelock: the faulty run processes at most SoakEventFactor times
	// the events of the failure-free no-HA run (plus a constant).
	InvLivelock = "bounded-events"
	// InvLost: lost inputs — distinct source tuples whose effect is
	// missing — never exceed the source tuples emitted, for every query
	// (joins and running sums included; docs/semantics.md).
	InvLost = "lost-bounded"
	// InvQueue: output queues stay within the strategy's bound.
	InvQueue = "queue-bounded"
	// InvPrecise: a strategy that promises precise recovery on the query
	// delivers exactly the failure-free output (no missing, duplicate,
	// wrong or spurious output) when the faults stay within the model. On a
	// union with the interleaving decisions logged (or shipped) it delivers
	// no missing or duplicate output and loses no input; outputs may differ
	// in value (wrong), since input the failed primary never processed is
	// legitimately interleaved differently from the failure-free run.
	InvPrecise = "precise"
)

// SoakEventFactor bounds the events of a faulty run relative to the
// failure-free no-HA run of the same experiment. HA strategies send
// acknowledgements, checkpoints and second copies (a few times the
// baseline); a livelock (a message storm, a timer loop) exceeds any factor.
const SoakEventFactor = 40

// soakEventSlack is added to the event bound for very short runs.
const soakEventSlack = 200_000

// Violation is one broken invariant.
type Violation struct {
	Invariant string `json:"invariant"`
	Detail    string `json:"detail"`
}

// SoakResult is the outcome of one soak case.
type SoakResult struct {
	Case *SoakCase
	// Violations are the broken invariants (empty: the case passed).
	Violations []Violation
	// InModel reports whether the faults stayed within the fault model;
	// OutOfModel says why not, and OutOfModelRule names the rule (one of
	// FaultModelRules).
	InModel        bool
	OutOfModel     string
	OutOfModelRule string
	// PreciseChecked reports whether the precise invariant applied.
	PreciseChecked bool
	// Recovery is the classified recovery (zero when the run failed).
	Recovery metrics.Recovery
	// Events and RefEvents are the simulator events of the faulty run
	// and of the failure-free no-HA run.
	Events, RefEvents int64
	// Emitted is the number of source tuples (all streams).
	Emitted int64
	// LostBound is the largest lost-inputs figure the run may report.
	LostBound int64
	// Live is the liveness phase's outcome.
	Live Liveness
	// TraceHash is the SHA-256 of the faulty run's trace (--check-determinism).
	TraceHash string
	// Coverage lists the named rare states the run reached.
	Coverage []string
}

// OutsidePromise names why the precise invariant did not apply to the
// run: RuleNotPromised when the strategy promises no precise recovery on
// the query with its parameters, else the fault-model rule the schedule
// broke; "" when it applied.
func (r *SoakResult) OutsidePromise() string {
	switch {
	case r.PreciseChecked:
		return ""
	case r.InModel:
		return RuleNotPromised
	}
	if ok, _ := r.Case.PreciseExpected(); !ok {
		return RuleNotPromised
	}
	return r.OutOfModelRule
}

// Failed reports whether an invariant broke.
func (r *SoakResult) Failed() bool { return len(r.Violations) > 0 }

// Has reports whether invariant inv broke.
func (r *SoakResult) Has(inv string) bool {
	for _, v := range r.Violations {
		if v.Invariant == inv {
			return true
		}
	}
	return false
}

func (r *SoakResult) violate(inv, format string, a ...any) {
	r.Violations = append(r.Violations, Violation{Invariant: inv, Detail: fmt.Sprintf(format, a...)})
}

// CheckSoakCase runs the case (and its failure-free no-HA reference) and
// checks every invariant. It never panics: a panic anywhere in the run is
// the no-panic violation.
func CheckSoakCase(c *SoakCase) *SoakResult {
	res := &SoakResult{Case: c}
	res.OutOfModelRule, res.OutOfModel = c.OutOfModel()
	res.InModel = res.OutOfModelRule == ""
	precise, _ := c.PreciseExpected()
	res.PreciseChecked = precise && res.InModel
	res.check(SoakEventFactor, soakEventSlack)
	return res
}

// check runs the case and checks the invariants, with the event bound
// factor × reference events + slack.
func (res *SoakResult) check(factor, slack int64) {
	func() {
		defer func() {
			if p := recover(); p != nil {
				res.violate(InvPanic, "panic: %v\n%s", p, firstFrames(debug.Stack()))
			}
		}()
		if err := res.run(factor, slack); err != nil {
			res.violate(InvPanic, "run failed: %v", err)
		}
	}()
}

// firstFrames keeps the start of a stack trace.
func firstFrames(st []byte) string {
	lines := strings.Split(string(st), "\n")
	return strings.Join(lines[:min(len(lines), 24)], "\n")
}

func (res *SoakResult) run(factor, slack int64) error {
	c := res.Case
	e := c.Experiment
	_, ref, err := Reference(e)
	if err != nil {
		return err
	}
	res.RefEvents = ref.Events
	res.Emitted = metrics.Emitted(ref.Trace)
	res.LostBound = res.Emitted

	st, err := strategies.Build(c.Strategy, e.ParamsFor(c.Strategy))
	if err != nil {
		return err
	}
	cfg, err := ConfigFor(e, st, false)
	if err != nil {
		return err
	}
	cfg.MaxEvents = factor*ref.Events + slack
	cfg.Planted = c.Planted
	out, err := Run(cfg)
	if err != nil {
		return fmt.Errorf("faulty run: %w", err)
	}
	res.Events = out.Events
	if out.Truncated {
		res.violate(InvLivelock, "stopped after %d events, %d× the %d of the failure-free no-HA run (plus %d): livelock or message storm",
			out.Events, factor, ref.Events, slack)
		return nil // the output is incomplete: the other checks would only echo this one
	}
	// The figures are timed against the reference run (Own nil): a soak
	// run has no failure-free run of its strategy, and the invariants of
	// metrics.CheckRecovery hold for either baseline.
	opts := RecoveryOptions(e, nil)
	rec := metrics.RecoveryWith(ref.Trace, out.Trace, opts)
	res.Recovery = rec
	if err := metrics.CheckRecovery(rec, ref.Trace, out.Trace, opts); err != nil {
		res.violate(InvFigures, "recovery figures: %v", err)
	}
	if rec.LostInputs < 0 || rec.LostInputs > res.LostBound {
		res.violate(InvLost, "%d lost inputs reported, but at most %d can be lost (the sources emitted %d tuples)",
			rec.LostInputs, res.LostBound, res.Emitted)
	}
	res.checkQueues(out.Trace, cfg.Topology)
	res.checkLive(max(1, st.Replicas()), ref.Trace, out.Trace)
	res.Coverage = coverage(e, out.Trace)
	if c.HashTrace {
		if res.TraceHash, err = TraceHash(out.Trace); err != nil {
			return err
		}
	}
	res.admitUncorrupted(out.Trace)
	if res.PreciseChecked {
		arbitrary := c.Experiment.QueryClass() == ha.Arbitrary
		lost := rec.LostInputs
		if arbitrary && lost > 0 {
			if covered, ok := unionCoveredLoss(c.Experiment, ref.Trace, out.Trace); ok {
				lost = covered // soak_union.go
			}
		}
		if (!arbitrary && (rec.Type != "precise" || rec.Missing+rec.Duplicates+rec.Wrong+rec.Spurious > 0)) ||
			(arbitrary && (rec.Missing+rec.Duplicates+rec.Spurious > 0 || lost > 0)) {
			ex := rec.Explanations
			if len(ex) > 3 {
				ex = append(ex[:3:3], fmt.Sprintf("… %d more", len(rec.Explanations)-3))
			}
			res.violate(InvPrecise, "%s %s within the fault model: %d missing, %d duplicate, %d wrong, %d spurious, %d lost inputs; %s",
				rec.Type, rec.Subtype, rec.Missing, rec.Duplicates, rec.Wrong, rec.Spurious, rec.LostInputs, strings.Join(ex, "; "))
		}
	}
	return nil
}

// queueBound is the largest output queue (tuples) a host may retain under
// the case's strategy in a run with the given number of takeovers, and
// what the bound is; a negative bound means none is checked.
func (res *SoakResult) queueBound(takeovers int) (bound int64, what string) {
	c := res.Case
	if info, err := strategies.Lookup(c.Strategy); err == nil && info.Promise.QueueBound != nil {
		if p, err := info.Parse(c.Experiment.ParamsFor(c.Strategy)); err == nil {
			if bound, what, ok := info.Promise.QueueBound(p); ok {
				return bound, what
			}
		}
	}
	if strings.HasPrefix(c.Query, "join") {
		return -1, "" // a join may emit more tuples than it receives
	}
	// No host can retain more distinct outputs than the sources emitted,
	// plus one end-of-stream mark per stream: every operator of the other
	// queries emits at most one output per input. A takeover that rebuilds
	// its state from a replay (upstream backup without dedup, a restart
	// from an old checkpoint) may emit every output once more, and the
	// hosts downstream process those as new input: a repeating rollback,
	// so each takeover adds one more set.
	marks := int64(c.Experiment.Source.Streams)
	what = fmt.Sprintf("the %d source tuples and %d end-of-stream marks", res.Emitted, marks)
	if takeovers > 0 {
		what = fmt.Sprintf("%d times %s (one set more per takeover)", 1+takeovers, what)
	}
	return int64(1+takeovers) * (res.Emitted + marks), what
}

func (res *SoakResult) checkQueues(trace *ha.Trace, topo *ha.Topology) {
	takeovers := 0
	for _, ev := range trace.Events() {
		if ev.Kind == ha.EvTakeover {
			takeovers++
		}
	}
	bound, what := res.queueBound(takeovers)
	if bound < 0 {
		return
	}
	for _, ev := range trace.Events() {
		if ev.Kind != ha.EvStats || ev.Stats == nil {
			continue
		}
		if ev.Stats.PeakQueue > bound {
			res.violate(InvQueue, "%s retained %d tuples at its peak, more than %s", ev.Host, ev.Stats.PeakQueue, what)
		}
	}
}
