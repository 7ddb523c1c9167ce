package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/strategies"
)

// soakFailure is one failure of a fragment for the fault model: a crash
// (end = at), a pause (end = at + for) or a partition that cuts some of
// the fragment's hosts off; hosts are the fragment's hosts it fails.
type soakFailure struct {
	at, end time.Duration
	hosts   []string
	crash   bool
}

// host names the failure by its first host, for the reasons.
func (f soakFailure) host() string { return f.hosts[0] }

// Fault-model rules: why a schedule lies outside the precise promise
// (SoakCase.OutOfModel; docs/reliability.md, "The fault model").
const (
	// RuleCorrupt: a link corrupts messages.
	RuleCorrupt = "corrupt"
	// RuleUnionInput: a fault on the links into a union's fragment.
	RuleUnionInput = "union-input"
	// RuleStateCutOff: a partition leaves a fragment's state only on the
	// minority side, with a spare on the majority's (standby strategies).
	RuleStateCutOff = "state-cut-off"
	// RuleRecovery: a fragment fails again within its recovery window, in
	// a way that can leave no host with its state.
	RuleRecovery = "failure-during-recovery"
	// RuleAllCrash: every host of a fragment crashes.
	RuleAllCrash = "every-host-crashes"
	// RuleAdjacent: a stateful fragment and its upstream neighbour both
	// fail (strategies whose promise says NoAdjacentFailures).
	RuleAdjacent = "adjacent-failures"
	// RuleNotPromised: the strategy promises no precise recovery on the
	// query with its parameters (SoakCase.PreciseExpected), whatever the
	// faults. Not a fault-model rule; the soak's reasons table counts it.
	RuleNotPromised = "not-promised"
)

// FaultModelRules lists the fault-model rules in the order
// SoakCase.OutOfModel checks them.
func FaultModelRules() []string {
	return []string{RuleUnionInput, RuleCorrupt, RuleStateCutOff, RuleRecovery, RuleAllCrash, RuleAdjacent}
}

// PreciseExpected reports whether the case's strategy, with its
// parameters, promises precise recovery on the case's query (its
// strategies.Promise; docs/semantics.md). why explains a false answer.
func (c *SoakCase) PreciseExpected() (ok bool, why string) {
	return PreciseExpected(c.Experiment, c.Strategy, c.Experiment.ParamsFor(c.Strategy))
}

// PreciseExpected reports whether strategy, with params, promises precise
// recovery on e's query (its strategies.Promise), and if not, why. The soak
// and the cluster's chaos check both hold runs to it.
func PreciseExpected(e *experiment.Experiment, strategy string, params map[string]any) (ok bool, why string) {
	return strategies.PreciseExpected(strategy, e.QueryClass(), params)
}

// InFaultModel reports whether the case's faults stay within the fault
// model under which the precise strategies promise precise recovery, and
// if not, why (SoakCase.OutOfModel names the rule).
func (c *SoakCase) InFaultModel() (ok bool, why string) {
	rule, why := c.OutOfModel()
	return rule == "", why
}

// OutOfModel names the first fault-model rule the case's faults break
// ("" when they stay within the model) and why. The model
// (docs/reliability.md):
//   - hosts fail by crashing or pausing (a long pause is a false
//     suspicion: the host is fenced when it comes back; a pause of at
//     most 150 ms, which no detector notices, is no failure); a fault on a
//     host that is already down (a crash or pause of a crashed host, a
//     pause that starts while the host is paused) does nothing;
//   - links may delay, lose and partition (the gap repair of package ha
//     resends what is still retained), but never corrupt;
//   - a partition longer than 150 ms, of any grouping (one host, a group
//     of hosts of several fragments, a fragment split in two), is one
//     failure of every fragment with a host outside its largest group
//     (of every fragment it names when no group is largest), failing
//     those of the fragment's hosts;
//   - per fragment, a failure comes at least SoakRecoveryWindow after the
//     previous one ended (no crash during the same fragment's recovery);
//     under a strategy that keeps a fragment's state on several hosts
//     (Replicas > 1: its primary and backup or secondary), failures
//     closer together are inside as long as one of those hosts fails in
//     none of them (recoveryFailure);
//   - at least one host of every fragment survives;
//   - different fragments, adjacent ones included, may fail together;
//   - for a strategy whose promise says NoAdjacentFailures (upstream
//     backup, which keeps each fragment's backup on its upstream
//     neighbour), a fragment that holds state and its upstream neighbour
//     do not both fail in one run (statefulFrag);
//   - on an arbitrary query (a union), no link into the union's fragment
//     is delayed, lossy or partitioned (unionInputFault).
func (c *SoakCase) OutOfModel() (rule, why string) {
	e := c.Experiment
	if e.QueryClass() == ha.Arbitrary {
		if why := unionInputFault(e); why != "" {
			return RuleUnionInput, why
		}
	}
	if slices.ContainsFunc(e.Faults, func(f experiment.FaultConfig) bool { return f.Corrupt != nil }) {
		return RuleCorrupt, "corrupted messages"
	}
	replicas := 1
	if st, err := strategies.Build(c.Strategy, e.ParamsFor(c.Strategy)); err == nil {
		replicas = max(1, st.Replicas())
	}
	if replicas > 1 {
		if why := stateCutOff(e, replicas); why != "" {
			return RuleStateCutOff, why
		}
	}
	perFrag := fragFailures(e)
	info, _ := strategies.Lookup(c.Strategy)
	for i, n := range e.Nodes {
		fs := perFrag[n.Name]
		hosts := e.FragHosts(i, replicas)
		if why := recoveryFailure(fs, hosts[:min(replicas, len(hosts))]); why != "" {
			return RuleRecovery, why
		}
		crashed := map[string]bool{}
		for _, f := range fs {
			if f.crash {
				crashed[f.host()] = true
			}
		}
		if len(crashed) >= len(hosts) {
			return RuleAllCrash, fmt.Sprintf("every host of %s crashes", n.Name)
		}
		if info.Promise.NoAdjacentFailures && i+1 < len(e.Nodes) && len(fs) > 0 && len(perFrag[e.Nodes[i+1].Name]) > 0 && statefulFrag(e, i+1) {
			a, b := fs[0], perFrag[e.Nodes[i+1].Name][0]
			return RuleAdjacent, fmt.Sprintf("adjacent fragments both fail (%s at %s, %s at %s): the upstream backup of %s is lost",
				a.host(), a.at, b.host(), b.at, e.Nodes[i+1].Name)
		}
	}
	return "", ""
}

// fragFailures lists each fragment's failures in time order (see
// OutOfModel): crashes, pauses longer than soakPartitionFailure and
// partitions longer than that. A fault that does nothing because its host
// is already down is left out, as the simulator ignores it: a crash or
// pause of a host crashed before, a pause that starts while the same host
// is paused; a partition fails only the hosts not crashed before it.
func fragFailures(e *experiment.Experiment) map[string][]soakFailure {
	faults := slices.Clone(e.Faults)
	slices.SortStableFunc(faults, func(a, b experiment.FaultConfig) int { return int(a.At - b.At) })
	crashedAt := map[string]time.Duration{} // host → when it crashed
	pausedTo := map[string]time.Duration{}  // host → when its last pause ends
	down := func(h string, at time.Duration) bool {
		c, ok := crashedAt[h]
		return ok && c <= at
	}
	perFrag := map[string][]soakFailure{}
	fail := func(hosts []string, at, end time.Duration, crash bool) {
		perFrag[baseOf(hosts[0])] = append(perFrag[baseOf(hosts[0])], soakFailure{at, end, hosts, crash})
	}
	for _, f := range faults {
		at := f.At.D()
		switch {
		case f.Crash != "":
			if !down(f.Crash, at) {
				crashedAt[f.Crash] = at
				fail([]string{f.Crash}, at, at, true)
			}
		case f.Pause != "" && f.For.D() > soakPartitionFailure:
			// A shorter pause is no failure, as a shorter partition is
			// not: no detector declares the host dead, it only delays.
			if !down(f.Pause, at) && at >= pausedTo[f.Pause] {
				pausedTo[f.Pause] = at + f.For.D()
				fail([]string{f.Pause}, at, at+f.For.D(), false)
			}
		case f.Partition != nil && f.For.D() > soakPartitionFailure:
			// Every fragment with a host in a group fails once, whatever
			// the grouping: one host cut off, a group of hosts of several
			// fragments, or a fragment split between the groups.
			// The largest group, if one is largest, is the side that
			// keeps serving: only fragments with a host outside it fail.
			big, ties := largestGroup(f.Partition)
			var order []string
			cut := map[string][]string{}
			for gi, g := range f.Partition {
				if gi == big && ties == 0 {
					continue
				}
				for _, h := range g {
					if down(h, at) {
						continue
					}
					base := baseOf(h)
					if _, ok := cut[base]; !ok {
						order = append(order, base)
					}
					cut[base] = append(cut[base], h)
				}
			}
			for _, base := range order {
				fail(cut[base], at, at+f.For.D(), false)
			}
		}
	}
	return perFrag
}

// largestGroup returns the index of a partition's largest group and how
// many other groups are as large (ties > 0: no group is largest).
func largestGroup(groups [][]string) (big, ties int) {
	for gi, g := range groups {
		switch {
		case len(g) > len(groups[big]):
			big, ties = gi, 0
		case gi != big && len(g) == len(groups[big]):
			ties++
		}
	}
	return big, ties
}

// recoveryFailure names a failure of a fragment during its recovery from
// an earlier one that can leave no host with the fragment's state, or ""
// if there is none. fs are the fragment's failures in time order, holders
// the hosts that hold its state from the start (its primary, and under a
// standby strategy its backup or secondary).
//
// Failures of the fragment each starting less than SoakRecoveryWindow
// after the end of an earlier one form an episode. With one holder (the
// state lives on one host, upstream queues or a global checkpoint), an
// episode of two failures or more is outside the promise: the host taking
// over may be the one that fails next. With several holders, such an
// episode is inside while a holder that never failed before fails in none
// of the episode's failures: that host keeps the state the whole time — it
// serves, or takes over and keeps serving, whatever happens to the others,
// and a host recruited meanwhile (a new backup, a returning host) only
// copies its state from a holder. So failures of a host that already
// failed in the episode (paused again once it resumed) or of spares stay
// inside. A holder that failed once is not counted on again: which host
// then holds the state is the protocol's choice.
func recoveryFailure(fs []soakFailure, holders []string) string {
	safe := slices.Clone(holders) // holders that have not failed yet
	for i := 0; i < len(fs); {
		j, end := i+1, fs[i].end
		for j < len(fs) && fs[j].at < end+SoakRecoveryWindow {
			end = max(end, fs[j].end)
			j++
		}
		episode := fs[i:j]
		i = j
		hit := func(h string) bool {
			return slices.ContainsFunc(episode, func(f soakFailure) bool { return slices.Contains(f.hosts, h) })
		}
		keeps := len(holders) > 1 && slices.ContainsFunc(safe, func(h string) bool { return !hit(h) })
		safe = slices.DeleteFunc(safe, hit)
		if len(episode) < 2 || keeps {
			continue
		}
		// Name the first failure that joined the episode.
		a, b := episode[0], episode[1]
		for k := 1; k < len(episode); k++ {
			if episode[k].at < episode[k-1].end+SoakRecoveryWindow {
				a, b = episode[k-1], episode[k]
				break
			}
		}
		return fmt.Sprintf("%s fails at %s, within %s of the failure of %s at %s (a failure during a recovery)",
			b.host(), b.at, SoakRecoveryWindow, a.host(), a.at)
	}
	return ""
}

// unionInputFault names the first fault that changes when the inputs of
// the union's fragment (the first) reach its hosts: a delay or loss on a
// link from a source to one of them (a lost tuple arrives again with the
// gap repair, later), or a partition between a source and one of them. A
// union's output is defined by that arrival order, and the failure-free
// run against which precision is judged has no such fault: the primary
// itself interleaves differently, before any host fails, under every
// strategy and without HA too. No strategy can undo that, so it lies
// outside the fault model of a precise promise (docs/semantics.md).
func unionInputFault(e *experiment.Experiment) string {
	first := e.Nodes[0].Name
	intoFirst := func(host string) bool {
		base, _, _ := strings.Cut(host, ".")
		return base == first
	}
	isSource := func(host string) bool { return host == "src" || host == "src2" }
	for _, f := range e.Faults {
		var lf *experiment.LinkFault
		switch {
		case f.Delay != nil:
			lf = f.Delay
		case f.Loss != nil:
			lf = f.Loss
		}
		if lf != nil && (lf.From == "" || isSource(lf.From)) && (lf.To == "" || intoFirst(lf.To)) {
			return fmt.Sprintf("a fault at %s on the links into the union's fragment %s changes the order in which its inputs arrive", f.At.D(), first)
		}
		for gi, g := range f.Partition {
			for gj, h := range f.Partition {
				if gi == gj {
					continue
				}
				if slices.ContainsFunc(g, isSource) && slices.ContainsFunc(h, intoFirst) {
					return fmt.Sprintf("a partition at %s between a source and the union's fragment %s changes the order in which its inputs arrive", f.At.D(), first)
				}
			}
		}
	}
	return ""
}

// soakPartitionFailure is the longest partition the fault model does not
// count as a failure of the hosts it cuts off: no detector declares a
// host dead sooner (200 ms timeout).
const soakPartitionFailure = 150 * time.Millisecond

// baseOf is the fragment (or source, sink) a host belongs to: "B" for B.2.
func baseOf(host string) string {
	base, _, _ := strings.Cut(host, ".")
	return base
}

// stateCutOff names the first partition, longer than a detection, that
// cuts every host holding a fragment's state (its primary and the
// replicas a standby strategy keeps in step: the first replicas hosts)
// off from the largest group, or from the sink's group, while a spare of
// the fragment is in it. That side serves (it holds a majority, or the
// sink and the downstream primary that confirms the state's holders dead)
// and holds no host with the state: a spare restarts the fragment empty,
// or the fragment waits for the heal, unbounded in a real partition and
// for ever after real crashes of half the deployment, which the detector
// cannot tell from it. A standby strategy takes the first (its output
// resumes; the liveness check holds it to that), so no standby strategy
// can be precise here: the state is where the serving side cannot reach
// it. Outside the precise promise.
func stateCutOff(e *experiment.Experiment, replicas int) string {
	for _, f := range e.Faults {
		if f.Partition == nil || f.For.D() <= soakPartitionFailure {
			continue
		}
		var sides []int
		if big, ties := largestGroup(f.Partition); ties == 0 {
			sides = append(sides, big)
		}
		for g, hs := range f.Partition {
			if slices.Contains(hs, sinkHost) && 2*len(hs) >= deploymentSize(e, replicas) && !slices.Contains(sides, g) {
				sides = append(sides, g)
			}
		}
		for _, g := range sides {
			in := map[string]bool{}
			for _, h := range f.Partition[g] {
				in[h] = true
			}
			for i, n := range e.Nodes {
				hosts := e.FragHosts(i, replicas)
				holders := hosts[:min(replicas, len(hosts))]
				if !slices.ContainsFunc(holders, func(h string) bool { return in[h] }) &&
					slices.ContainsFunc(hosts[len(holders):], func(h string) bool { return in[h] }) {
					return fmt.Sprintf("a partition at %s cuts every host with %s's state (%s) off from the %s, where a spare restarts it empty",
						f.At.D(), n.Name, strings.Join(holders, ", "), sideName(f.Partition[g]))
				}
			}
		}
	}
	return ""
}

// sideName names the group of a partition that stateCutOff checks.
func sideName(g []string) string {
	if slices.Contains(g, sinkHost) {
		return "sink's group"
	}
	return "largest group"
}

// sinkHost is the sink's host name in every experiment.
const sinkHost = "sink"

// deploymentSize is the number of hosts of e's deployment: the sources,
// every fragment's hosts and the sink.
func deploymentSize(e *experiment.Experiment, replicas int) int {
	n := 1 + e.Source.Streams
	for i := range e.Nodes {
		n += len(e.FragHosts(i, replicas))
	}
	return n
}
