package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// Coverage of rare states: each soak run reports which of these named
// states its trace reached, so a change of the generator cannot silently
// stop exercising one (streamha soak fails a soak of at least
// CoverageMinRuns runs in which a state is reached in fewer than
// CoverageMinShare of them).
const (
	// CovCrashDuringRecovery: a host crashes while another fragment is
	// recovering: its primary failed and its new primary has not caught
	// up yet (a new primary that replays nothing counts as caught up
	// 500 ms after its takeover).
	CovCrashDuringRecovery = "crash-during-other-recovery"
	// CovNeighboursDown: both neighbour fragments of a fragment have their
	// primary failed (crashed, paused or cut off) at once.
	CovNeighboursDown = "both-neighbours-down"
	// CovSplitFragment: a partition puts hosts of one fragment in two groups.
	CovSplitFragment = "fragment-split"
	// CovGroupPartition: a partition cuts off a group of hosts of several
	// fragments.
	CovGroupPartition = "group-partition"
	// CovFencedHealed: a primary paused or cut off while its fragment was
	// taken over comes back (it is fenced, then healed).
	CovFencedHealed = "fenced-then-healed"
	// CovLastWindow: a fault starts within the last 500 ms of the stream
	// (its last window) or in the drain.
	CovLastWindow = "fault-in-last-window"
	// CovEndOfStream: a link fault, pause or partition is in force as the
	// sources end the stream.
	CovEndOfStream = "fault-over-end-of-stream"
	// CovTakeoverRace: two takeovers of one fragment within the detection
	// window.
	CovTakeoverRace = "takeover-raced"
	// CovCheckpointInterrupted: a checkpoint in flight never completes
	// because a host failed or a partition cut it.
	CovCheckpointInterrupted = "checkpoint-interrupted"
	// CovReplayAfterLoss: a takeover while loss or a partition is in force,
	// then a replay to the new primary (its resume may have been lost).
	CovReplayAfterLoss = "replay-after-lossy-takeover"
	// CovPauseAroundDetection: a pause lasting about the detection time
	// (150–250 ms).
	CovPauseAroundDetection = "pause-around-detection"
	// CovInputGap: a receiver takes a hole in its input as lost.
	CovInputGap = "input-gap"
)

// CoverageStates lists the named states, in the table's order.
func CoverageStates() []string {
	return []string{CovCrashDuringRecovery, CovNeighboursDown, CovSplitFragment, CovGroupPartition, CovFencedHealed,
		CovLastWindow, CovEndOfStream, CovTakeoverRace, CovCheckpointInterrupted, CovReplayAfterLoss,
		CovPauseAroundDetection, CovInputGap}
}

const (
	// CoverageMinRuns is the soak size from which coverage is enforced.
	CoverageMinRuns = 2000
	// CoverageMinShare is the share of runs each named state must reach.
	CoverageMinShare = 0.005
)

// parseGroups reads a partition event's note (fmt.Sprint of [][]string).
func parseGroups(note string) [][]string {
	note = strings.TrimSuffix(strings.TrimPrefix(note, "["), "]")
	var out [][]string
	for _, g := range strings.Split(note, "] [") {
		out = append(out, strings.Fields(strings.Trim(g, "[]")))
	}
	return out
}

// cutOff lists the hosts outside the largest group (every listed host when
// no group is largest).
func cutOff(groups [][]string) map[string]bool {
	big, ties := 0, 0
	for gi, g := range groups {
		switch {
		case len(g) > len(groups[big]):
			big, ties = gi, 0
		case gi != big && len(g) == len(groups[big]):
			ties++
		}
	}
	out := map[string]bool{}
	for gi, g := range groups {
		if gi == big && ties == 0 {
			continue
		}
		for _, h := range g {
			out[h] = true
		}
	}
	return out
}

// coverage names the rare states the run of e with trace reached.
func coverage(e *experiment.Experiment, trace *ha.Trace) []string {
	hit := map[string]bool{}
	dur := e.Duration.D()
	for _, f := range e.Faults {
		at, end := f.At.D(), f.At.D()+f.For.D()
		if at >= dur-500*time.Millisecond {
			hit[CovLastWindow] = true
		}
		if f.Crash == "" && at <= dur && dur < end {
			hit[CovEndOfStream] = true
		}
	}
	frags := map[string]int{}
	for i, n := range e.Nodes {
		frags[n.Name] = i
	}
	primary := map[string]string{}          // fragment -> current primary
	down := map[string]bool{}               // fragment -> its primary failed, not yet replaced
	recovering := map[string]bool{}         // fragment -> primary failed, not caught up
	recoverBy := map[string]time.Duration{} // fragment -> its takeover + 500 ms
	out := map[string]bool{}                // hosts paused or cut off
	tookOverWhileOut := map[string]bool{}
	lastTakeover := map[string]time.Duration{}
	lossyTakeover := map[string]bool{} // host that took over under loss
	var cut map[string]bool
	type ck struct {
		host string
		seq  uint64
	}
	open := map[ck]bool{}
	interrupted := map[ck]bool{}
	for _, n := range e.Nodes {
		primary[n.Name] = n.Name
	}
	lossAt := func(t time.Duration) bool {
		return slices.ContainsFunc(e.Faults, func(f experiment.FaultConfig) bool {
			return (f.Loss != nil || f.Partition != nil) && f.At.D() <= t && t < f.At.D()+f.For.D()
		})
	}
	neighboursDown := func() {
		for i := 1; i+1 < len(e.Nodes); i++ {
			if down[e.Nodes[i-1].Name] && down[e.Nodes[i+1].Name] {
				hit[CovNeighboursDown] = true
			}
		}
	}
	fail := func(h string) {
		if f := baseOf(h); primary[f] == h {
			down[f], recovering[f] = true, true
			delete(recoverBy, f)
			neighboursDown()
		}
		for k := range open {
			interrupted[k] = true
		}
	}
	for _, ev := range trace.Events() {
		switch ev.Kind {
		case ha.EvCrash:
			for f, r := range recovering {
				if by, ok := recoverBy[f]; r && f != baseOf(ev.Host) && (!ok || ev.T <= by) {
					hit[CovCrashDuringRecovery] = true
				}
			}
			fail(ev.Host)
		case ha.EvPause:
			if d := time.Duration(ev.N); d >= 150*time.Millisecond && d <= 250*time.Millisecond {
				hit[CovPauseAroundDetection] = true
			}
			out[ev.Host] = true
			fail(ev.Host)
		case ha.EvResume:
			out[ev.Host] = false
			if tookOverWhileOut[ev.Host] {
				hit[CovFencedHealed] = true
			}
			if f := baseOf(ev.Host); primary[f] == ev.Host {
				down[f] = false
			}
		case ha.EvPartition:
			groups := parseGroups(ev.Note)
			side := map[string]int{}
			for gi, g := range groups {
				for _, h := range g {
					if _, ok := frags[baseOf(h)]; ok {
						side[baseOf(h)] |= 1 << gi
					}
				}
			}
			for _, s := range side {
				if s&(s-1) != 0 {
					hit[CovSplitFragment] = true
				}
			}
			cut = cutOff(groups)
			seen := map[string]bool{}
			for h := range cut {
				if _, ok := frags[baseOf(h)]; ok {
					seen[baseOf(h)] = true
				}
				out[h] = true
				fail(h)
			}
			if len(seen) >= 2 {
				hit[CovGroupPartition] = true
			}
		case ha.EvHeal:
			for h := range cutOff(parseGroups(ev.Note)) {
				out[h] = false
				if tookOverWhileOut[h] {
					hit[CovFencedHealed] = true
				}
				if f := baseOf(h); primary[f] == h {
					down[f] = false
				}
			}
		case ha.EvTakeover:
			f := baseOf(ev.Host)
			if old := primary[f]; old != ev.Host && out[old] {
				tookOverWhileOut[old] = true
			}
			if t, ok := lastTakeover[f]; ok && ev.T-t <= soakDetectWindow {
				hit[CovTakeoverRace] = true
			}
			lastTakeover[f] = ev.T
			primary[f], down[f], recovering[f], recoverBy[f] = ev.Host, false, true, ev.T+500*time.Millisecond
			if lossAt(ev.T) {
				lossyTakeover[ev.Host] = true
			}
		case ha.EvCaughtUp:
			recovering[baseOf(ev.Host)] = false
		case ha.EvReplayStart:
			if lossyTakeover[ev.Peer] {
				hit[CovReplayAfterLoss] = true
			}
		case ha.EvCheckpointBeg:
			open[ck{ev.Host, ev.Seq}] = true
		case ha.EvCheckpointEnd:
			k := ck{ev.Peer, ev.Seq}
			delete(open, k)
			delete(interrupted, k)
		case ha.EvGap:
			hit[CovInputGap] = true
		}
	}
	if len(interrupted) > 0 {
		hit[CovCheckpointInterrupted] = true
	}
	var names []string
	for _, s := range CoverageStates() {
		if hit[s] {
			names = append(names, s)
		}
	}
	return names
}
