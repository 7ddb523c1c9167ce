package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/strategies"
)

// Chaos invariants (docs/chaos.md defines each one).
const (
	// InvFaultsApplied: every planned fault was injected (signal sent,
	// rules posted).
	InvFaultsApplied = "faults-applied"
	// InvWithinModel: what really happened stayed within the fault model
	// (a loaded machine can make the detector declare hosts the schedule
	// did not touch); the precise invariants are judged only then.
	InvWithinModel = "within-model"
	// InvNoDuplicates, InvNoWrong and InvNoMissing are the precise
	// strategies' promise: no output delivered twice, none with a wrong
	// value or lineage (nor spurious), and every output expected before the
	// sources stopped delivered.
	InvNoDuplicates = "no-duplicates"
	InvNoWrong      = "no-wrong"
	InvNoMissing    = "no-missing"
	// InvLostBounded: lost inputs never exceed the tuples the sources emitted.
	InvLostBounded = "lost-bounded"
	// InvCleanExit: every node the schedule did not kill exited with status 0.
	InvCleanExit = "clean-exit"
	// InvBoundedEnd: every node exited on its own by the end of the run
	// plus its linger plus ChaosExitSlack.
	InvBoundedEnd = "bounded-end"
	// InvNoOrphans: no node process (nor process group) is left.
	InvNoOrphans = "no-orphans"
)

// DefaultLinger is how long a node stays a member after the run ends,
// unless --linger says otherwise.
const DefaultLinger = time.Second

// ChaosExitSlack is how long after its end plus linger a node may take to exit.
const ChaosExitSlack = 3 * time.Second

// Verdict statuses.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP" // not judged: the run left the fault model
	Info = "INFO" // not promised by this strategy: the figure is shown
)

// Verdict is one invariant's outcome with its evidence.
type Verdict struct {
	Invariant string `json:"invariant"`
	Status    string `json:"status"`
	Evidence  string `json:"evidence"`
}

// NodeExit is how one node process ended.
type NodeExit struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Status is the process's exit status as Go reports it ("exit status
	// 0", "signal: killed").
	Status string `json:"status"`
	// Chaos: the schedule killed it. Forced: the launcher had to kill it
	// because it did not exit by the deadline.
	Chaos  bool `json:"chaos,omitempty"`
	Forced bool `json:"forced,omitempty"`
	// After is when it exited, since the start instant.
	After time.Duration `json:"after"`
}

// ChaosReport is the outcome of one strategy's chaos run.
type ChaosReport struct {
	Strategy string         `json:"strategy"`
	Seed     uint64         `json:"seed"`
	Duration time.Duration  `json:"duration"`
	Window   time.Duration  `json:"window"`
	Plan     []ChaosFault   `json:"plan"`
	Applied  []AppliedFault `json:"applied"`
	Nodes    []NodeExit     `json:"nodes"`
	// Elapsed is from the start instant until the last node exited;
	// Bound is the most it may take.
	Elapsed  time.Duration `json:"elapsed"`
	Bound    time.Duration `json:"bound"`
	Orphans  []string      `json:"orphans,omitempty"`
	Verdicts []Verdict     `json:"verdicts"`
}

// Failed lists the invariants that failed.
func (r *ChaosReport) Failed() []string {
	var out []string
	for _, v := range r.Verdicts {
		if v.Status == Fail {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// Counts returns the number of planned faults per kind.
func (r *ChaosReport) Counts() map[string]int {
	c := map[string]int{}
	for _, f := range r.Plan {
		c[f.Kind]++
	}
	return c
}

// Summary is a one-line description of the faults.
func (r *ChaosReport) Summary() string {
	c := r.Counts()
	destructive := 0
	for _, f := range r.Plan {
		if f.Destructive {
			destructive++
		}
	}
	return fmt.Sprintf("%d faults in %s (%d kill, %d pause, %d partition; %d destructive), window %s, seed %d",
		len(r.Plan), r.Duration, c[ChaosKill], c[ChaosPause], c[ChaosPartition], destructive, r.Window, r.Seed)
}

func (r *ChaosReport) add(inv, status, format string, a ...any) {
	r.Verdicts = append(r.Verdicts, Verdict{Invariant: inv, Status: status, Evidence: fmt.Sprintf(format, a...)})
}

// chaosInput is what the checker needs beyond the report.
type chaosInput struct {
	exp      *experiment.Experiment
	topo     *ha.Topology
	replicas int
	params   map[string]any
	ref      *ha.Trace
	trace    *ha.Trace
	rec      metrics.Recovery
}

// check computes every verdict of the report.
func (r *ChaosReport) check(in chaosInput) {
	// faults-applied
	var bad []string
	for _, a := range r.Applied {
		if a.Err != "" {
			bad = append(bad, fmt.Sprintf("%s at %s: %s", a.What, a.At.Round(time.Millisecond), a.Err))
		}
	}
	if len(bad) > 0 {
		r.add(InvFaultsApplied, Fail, "%d of %d actions failed: %s", len(bad), len(r.Applied), strings.Join(bad, "; "))
	} else {
		late := time.Duration(0)
		for _, a := range r.Applied {
			late = max(late, a.At-a.Planned)
		}
		r.add(InvFaultsApplied, Pass, "%d faults, %d actions injected, at most %s after the planned time", len(r.Plan), len(r.Applied), late.Round(time.Millisecond))
	}

	// within-model, then the precise invariants
	inModel, why := r.withinModel(in)
	if inModel {
		r.add(InvWithinModel, Pass, "%s", why)
	} else {
		r.add(InvWithinModel, Skip, "%s: the precise invariants are not judged", why)
	}
	precise, whyNot := strategies.PreciseExpected(r.Strategy, in.exp.QueryClass(), in.params)
	status := func(ok bool) string {
		switch {
		case !precise:
			return Info
		case !inModel:
			return Skip
		case ok:
			return Pass
		}
		return Fail
	}
	suffix := ""
	if !precise {
		suffix = " (not promised: " + whyNot + ")"
	}
	rec := in.rec
	r.add(InvNoDuplicates, status(rec.Duplicates == 0), "%d duplicate outputs among %d delivered%s", rec.Duplicates, rec.Delivered, suffix)
	r.add(InvNoWrong, status(rec.Wrong+rec.Spurious == 0), "%d wrong and %d spurious outputs%s", rec.Wrong, rec.Spurious, suffix)
	missing, expected, examples := missingBefore(in.ref, in.trace, r.Duration)
	ex := ""
	if len(examples) > 0 {
		ex = " (e.g. " + strings.Join(examples, ", ") + ")"
	}
	lastEnd := time.Duration(0)
	for _, f := range r.Plan {
		lastEnd = max(lastEnd, f.End())
	}
	r.add(InvNoMissing, status(missing == 0), "%d of the %d outputs expected before the sources stopped at %s missing%s; the last fault's recovery window closed at %s%s",
		missing, expected, r.Duration, ex, (lastEnd + r.Window).Round(time.Millisecond), suffix)

	// lost-bounded
	emitted, what := emittedBound(in)
	if rec.LostInputs < 0 || rec.LostInputs > emitted {
		r.add(InvLostBounded, Fail, "%d lost inputs reported, more than %s (%d)", rec.LostInputs, what, emitted)
	} else {
		r.add(InvLostBounded, Pass, "%d lost inputs ≤ %s (%d)", rec.LostInputs, what, emitted)
	}

	// clean-exit, bounded-end, no-orphans
	var dirty, forced []string
	for _, n := range r.Nodes {
		if n.Forced {
			forced = append(forced, n.Host)
		}
		if !n.Chaos && !n.Forced && n.Status != "exit status 0" {
			dirty = append(dirty, n.Host+": "+n.Status)
		}
	}
	killed := 0
	for _, n := range r.Nodes {
		if n.Chaos {
			killed++
		}
	}
	if len(dirty) > 0 {
		r.add(InvCleanExit, Fail, "%s", strings.Join(dirty, "; "))
	} else {
		r.add(InvCleanExit, Pass, "%d nodes exited with status 0, %d killed by the schedule", len(r.Nodes)-killed-len(forced), killed)
	}
	if len(forced) > 0 || r.Elapsed > r.Bound {
		r.add(InvBoundedEnd, Fail, "the run took %s (bound %s); killed at the deadline: %s", r.Elapsed.Round(time.Millisecond), r.Bound, strings.Join(forced, ", "))
	} else {
		r.add(InvBoundedEnd, Pass, "the last node exited %s after the start (bound %s)", r.Elapsed.Round(time.Millisecond), r.Bound)
	}
	if len(r.Orphans) > 0 {
		r.add(InvNoOrphans, Fail, "still running: %s", strings.Join(r.Orphans, ", "))
	} else {
		r.add(InvNoOrphans, Pass, "all %d node processes and their process groups are gone", len(r.Nodes))
	}
}

// withinModel checks the run against the fault model from the trace:
// per fragment, the hosts lost (killed or declared dead by any node) stay
// below the spares, and no two hosts are lost within a Window of each
// other anywhere in the cluster; sources and the sink are never declared dead.
func (r *ChaosReport) withinModel(in chaosInput) (bool, string) {
	fragOf := map[string]int{}
	for i, f := range in.topo.Frags {
		for _, h := range f.Hosts {
			fragOf[h] = i
		}
	}
	first := map[string]time.Duration{} // host → when it was first lost
	for _, ev := range in.trace.Events() {
		var h string
		switch ev.Kind {
		case ha.EvCrash:
			h = ev.Host
		case ha.EvDetect:
			h = ev.Peer
		default:
			continue
		}
		if _, ok := first[h]; !ok {
			first[h] = ev.T
		}
	}
	hosts := sortedHosts(first)
	slices.SortStableFunc(hosts, func(a, b string) int { return int(first[a] - first[b]) })
	lost := make([]int, len(in.topo.Frags))
	for i, h := range hosts {
		fi, ok := fragOf[h]
		if !ok {
			return false, fmt.Sprintf("%s (no replica) was declared dead at %s", h, first[h].Round(time.Millisecond))
		}
		lost[fi]++
		spares := len(in.topo.Frags[fi].Hosts) - max(1, in.replicas)
		if lost[fi] > spares {
			return false, fmt.Sprintf("fragment %s lost %d hosts but has %d spares", in.topo.Frags[fi].Name, lost[fi], spares)
		}
		if i > 0 && first[h]-first[hosts[i-1]] < r.Window {
			return false, fmt.Sprintf("%s was lost at %s, within %s of %s at %s", h, first[h].Round(time.Millisecond), r.Window,
				hosts[i-1], first[hosts[i-1]].Round(time.Millisecond))
		}
	}
	unplanned := 0
	for _, h := range hosts {
		if !slices.ContainsFunc(r.Plan, func(f ChaosFault) bool { return f.Destructive && f.Host == h }) {
			unplanned++
		}
	}
	return true, fmt.Sprintf("%d hosts lost (killed or declared dead), %d of them not by a destructive fault; every fragment kept a spare and losses were ≥ %s apart",
		len(hosts), unplanned, r.Window)
}

// missingBefore counts the expected outputs (by id) whose failure-free
// delivery came before cutoff and that the run never delivered.
func missingBefore(ref, trace *ha.Trace, cutoff time.Duration) (missing, expected int, examples []string) {
	got := map[ha.OutputID]bool{}
	for _, d := range trace.Deliveries().All() {
		got[d.Tuple.ID] = true
	}
	seen := map[ha.OutputID]bool{}
	for _, d := range ref.Deliveries().All() {
		id := d.Tuple.ID
		if d.T > cutoff || seen[id] {
			continue
		}
		seen[id] = true
		expected++
		if !got[id] {
			missing++
			if len(examples) < 3 {
				examples = append(examples, id.String())
			}
		}
	}
	return missing, expected, examples
}

// emittedBound is the most inputs a run can lose: the source tuples the
// sources emitted (lost_inputs counts distinct source tuples, joins and
// running sums included; docs/semantics.md).
func emittedBound(in chaosInput) (int64, string) {
	return metrics.Emitted(in.ref), "the tuples the sources emitted"
}
