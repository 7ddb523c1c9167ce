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

// soakFailure is a host failure for the fault model: a crash (end = at) or
// a pause (end = at + for).
type soakFailure struct {
	at, end time.Duration
	host    string
	crash   bool
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
// if not, why. The model (docs/reliability.md):
//   - hosts fail by crashing or pausing (a long pause is a false
//     suspicion: the host is fenced when it comes back; a pause of at
//     most 150 ms, which no detector notices, is no failure);
//   - links may delay, lose and partition (the gap repair of package ha
//     resends what is still retained), but never corrupt;
//   - per fragment, a failure comes at least SoakRecoveryWindow after the
//     previous one ended (no crash during the same fragment's recovery),
//     and at least one host of the fragment survives; a partition longer
//     than 150 ms, of any grouping (one host, a group of hosts of several
//     fragments, a fragment split in two), counts as one failure of every
//     fragment with a host outside its largest group (of every fragment
//     it names when no group is largest);
//   - different fragments, adjacent ones included, may fail together;
//   - for a strategy whose promise says NoAdjacentFailures (upstream
//     backup, which keeps each fragment's backup on its upstream
//     neighbour), a fragment that holds state and its upstream neighbour
//     do not both fail in one run (statefulFrag);
//   - on an arbitrary query (a union), no link into the union's fragment
//     is delayed, lossy or partitioned (unionInputFault).
func (c *SoakCase) InFaultModel() (ok bool, why string) {
	e := c.Experiment
	if e.QueryClass() == ha.Arbitrary {
		if why := unionInputFault(e); why != "" {
			return false, why
		}
	}
	perFrag := map[string][]soakFailure{}
	fail := func(host string, at, end time.Duration, crash bool) {
		base, _, _ := strings.Cut(host, ".")
		perFrag[base] = append(perFrag[base], soakFailure{at, end, host, crash})
	}
	for _, f := range e.Faults {
		switch {
		case f.Corrupt != nil:
			return false, "corrupted messages"
		case f.Crash != "":
			fail(f.Crash, f.At.D(), f.At.D(), true)
		case f.Pause != "" && f.For.D() > soakPartitionFailure:
			// A shorter pause is no failure, as a shorter partition is
			// not: no detector declares the host dead, it only delays.
			fail(f.Pause, f.At.D(), f.At.D()+f.For.D(), false)
		case f.Partition != nil && f.For.D() > soakPartitionFailure:
			// Every fragment with a host in a group fails once, whatever
			// the grouping: one host cut off, a group of hosts of several
			// fragments, or a fragment split between the groups.
			// The largest group, if one is largest, is the side that
			// keeps serving: only fragments with a host outside it fail.
			big, ties := 0, 0
			for gi, g := range f.Partition {
				switch {
				case len(g) > len(f.Partition[big]):
					big, ties = gi, 0
				case gi != big && len(g) == len(f.Partition[big]):
					ties++
				}
			}
			seen := map[string]bool{}
			for gi, g := range f.Partition {
				if gi == big && ties == 0 {
					continue
				}
				for _, h := range g {
					base, _, _ := strings.Cut(h, ".")
					if !seen[base] {
						seen[base] = true
						fail(h, f.At.D(), f.At.D()+f.For.D(), false)
					}
				}
			}
		}
	}
	replicas := 1
	if st, err := strategies.Build(c.Strategy, e.ParamsFor(c.Strategy)); err == nil {
		replicas = max(1, st.Replicas())
	}
	if replicas > 1 {
		if why := stateCutOff(e, replicas); why != "" {
			return false, why
		}
	}
	info, _ := strategies.Lookup(c.Strategy)
	for i, n := range e.Nodes {
		fs := perFrag[n.Name]
		slices.SortStableFunc(fs, func(a, b soakFailure) int { return int(a.at - b.at) })
		crashed := map[string]bool{}
		for j, f := range fs {
			if f.crash {
				crashed[f.host] = true
			}
			if j > 0 && f.at < fs[j-1].end+SoakRecoveryWindow {
				return false, fmt.Sprintf("%s fails at %s, within %s of the failure of %s at %s (a failure during a recovery)",
					f.host, f.at, SoakRecoveryWindow, fs[j-1].host, fs[j-1].at)
			}
		}
		if len(crashed) >= len(e.FragHosts(i, replicas)) {
			return false, fmt.Sprintf("every host of %s crashes", n.Name)
		}
		if info.Promise.NoAdjacentFailures && i+1 < len(e.Nodes) && len(fs) > 0 && len(perFrag[e.Nodes[i+1].Name]) > 0 && statefulFrag(e, i+1) {
			a, b := fs[0], perFrag[e.Nodes[i+1].Name][0]
			return false, fmt.Sprintf("adjacent fragments both fail (%s at %s, %s at %s): the upstream backup of %s is lost",
				a.host, a.at, b.host, b.at, e.Nodes[i+1].Name)
		}
	}
	return true, ""
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
// off from the largest group while a spare of the fragment is in it. The
// serving side then holds a majority and no host with the state: a spare
// restarts the fragment empty, or the fragment waits for the heal,
// unbounded in a real partition. A standby strategy takes the first (its
// output resumes; the liveness check still holds it to that), so no
// standby strategy can be precise here: the state is where the serving
// side cannot reach it. Outside the precise promise.
func stateCutOff(e *experiment.Experiment, replicas int) string {
	for _, f := range e.Faults {
		if f.Partition == nil || f.For.D() <= soakPartitionFailure {
			continue
		}
		big, ties := 0, 0
		for gi, g := range f.Partition {
			switch {
			case len(g) > len(f.Partition[big]):
				big, ties = gi, 0
			case gi != big && len(g) == len(f.Partition[big]):
				ties++
			}
		}
		if ties > 0 {
			continue
		}
		in := map[string]bool{}
		for _, h := range f.Partition[big] {
			in[h] = true
		}
		for i, n := range e.Nodes {
			hosts := e.FragHosts(i, replicas)
			holders := hosts[:min(replicas, len(hosts))]
			if !slices.ContainsFunc(holders, func(h string) bool { return in[h] }) &&
				slices.ContainsFunc(hosts[len(holders):], func(h string) bool { return in[h] }) {
				return fmt.Sprintf("a partition at %s cuts every host with %s's state (%s) off from the largest group, where a spare restarts it empty",
					f.At.D(), n.Name, strings.Join(holders, ", "))
			}
		}
	}
	return ""
}
