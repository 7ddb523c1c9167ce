package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/ha"
)

// Chaos fault kinds.
const (
	ChaosKill      = "kill"      // SIGKILL to the host's process group (permanent)
	ChaosPause     = "pause"     // SIGSTOP, SIGCONT after For
	ChaosPartition = "partition" // the host's data links stall and its gossip is dropped for For
)

// ChaosKinds are every chaos fault kind, in the order they are documented.
var ChaosKinds = []string{ChaosKill, ChaosPause, ChaosPartition}

// ChaosConfig configures `streamha cluster --chaos`: random faults drawn
// (from Seed) over the whole run, restricted to the fault model under which
// the precise strategies promise precise recovery (docs/chaos.md):
//   - only fragment hosts fail: sources and the sink have no replica;
//   - one fault at a time in the whole cluster, and the next one starts
//     Window after the previous one ended (no failure during a recovery);
//   - a fault hits a fragment only while it has a spare: at most
//     spares−1 hosts of each fragment are lost (killed or paused long enough
//     to be declared dead), one host being kept as a margin for a false
//     detection on a loaded machine;
//   - partitions and short pauses last less than the failure detector
//     needs, and partitions stall links (TCP would retransmit) instead of
//     dropping messages.
type ChaosConfig struct {
	// Seed draws the schedule (the experiment's seed by default).
	Seed uint64
	// Kinds are the fault kinds drawn (default: all of ChaosKinds).
	Kinds []string
	// Window is the recovery window between faults (default by profile:
	// tuned 2.5 s, steady 4 s, local and lan 10 s).
	Window time.Duration
	// Profile is the detector profile the nodes run; it sets the default
	// Window and the pause and partition lengths.
	Profile string
}

// ChaosFault is one planned fault.
type ChaosFault struct {
	At   time.Duration `json:"at"`
	For  time.Duration `json:"for,omitempty"`
	Kind string        `json:"kind"`
	Host string        `json:"host"`
	// Others is the other side of a partition (every other host when it
	// isolates Host).
	Others []string `json:"others,omitempty"`
	// Destructive faults (kills, pauses long enough to be detected) cost
	// the fragment one host: it is fenced or gone afterwards.
	Destructive bool `json:"destructive"`
}

// End is when the fault is over (its start for a kill).
func (f ChaosFault) End() time.Duration { return f.At + f.For }

// String describes the fault like the experiment's fault descriptions.
func (f ChaosFault) String() string {
	switch f.Kind {
	case ChaosKill:
		return fmt.Sprintf("kill %s at %s", f.Host, f.At.Round(time.Millisecond))
	case ChaosPause:
		return fmt.Sprintf("pause %s at %s for %s", f.Host, f.At.Round(time.Millisecond), f.For)
	default:
		return fmt.Sprintf("partition [%s] | [%s] at %s for %s", f.Host, strings.Join(f.Others, " "), f.At.Round(time.Millisecond), f.For)
	}
}

// chaosTiming are the profile-dependent lengths.
type chaosTiming struct {
	window           time.Duration
	shortMin, short  time.Duration // pauses and partitions the detector cannot declare
	longMin, longMax time.Duration // pauses it declares
}

func timingFor(profile string) (chaosTiming, error) {
	switch profile {
	case "", ProfileTuned:
		// Probe 100 ms, suspicion ≥ 260 ms after a failed probe.
		return chaosTiming{2500 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, 1200 * time.Millisecond, 2 * time.Second}, nil
	case ProfileSteady:
		// Probe 200 ms, suspicion ≥ 780 ms.
		return chaosTiming{4 * time.Second, 100 * time.Millisecond, 400 * time.Millisecond, 2500 * time.Millisecond, 3500 * time.Millisecond}, nil
	case ProfileLocal, ProfileLAN:
		return chaosTiming{10 * time.Second, 200 * time.Millisecond, 800 * time.Millisecond, 8 * time.Second, 10 * time.Second}, nil
	}
	return chaosTiming{}, fmt.Errorf("chaos: unknown detector profile %q", profile)
}

// ErrNoSpare means the topology leaves chaos nothing to break within the
// fault model.
var ErrNoSpare = errors.New("chaos: every fragment needs at least one spare host (raise spares)")

// PlanChaos draws the chaos schedule of a run of length d (the sources'
// emission time) on topo, under a strategy that keeps replicas live copies
// of each fragment. It is a pure function of its arguments. Faults start
// after the first second and the last one ends a Window before d, so
// that every recovery completes while the sources still emit.
func PlanChaos(topo *ha.Topology, replicas int, d time.Duration, cfg ChaosConfig) ([]ChaosFault, error) {
	tm, err := timingFor(cfg.Profile)
	if err != nil {
		return nil, err
	}
	if cfg.Window > 0 {
		tm.window = cfg.Window
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = ChaosKinds
	}
	for _, k := range kinds {
		if !slices.Contains(ChaosKinds, k) {
			return nil, fmt.Errorf("chaos: unknown fault kind %q (want %s)", k, strings.Join(ChaosKinds, ", "))
		}
	}
	replicas = max(1, replicas)
	type frag struct {
		hosts  []string // live and trusted, in takeover order
		budget int      // destructive faults left
	}
	var frags []*frag
	for _, f := range topo.Frags {
		spares := len(f.Hosts) - replicas
		if spares < 1 {
			return nil, fmt.Errorf("%w: fragment %s has %d hosts for %d replicas", ErrNoSpare, f.Name, len(f.Hosts), replicas)
		}
		frags = append(frags, &frag{hosts: slices.Clone(f.Hosts), budget: spares - 1})
	}
	all := topo.Hosts()
	r := experiment.Seeded(cfg.Seed, "chaos", strings.Join(all, ","))
	between := func(lo, hi time.Duration) time.Duration {
		ms := int64((hi - lo) / time.Millisecond)
		return lo + time.Duration(r.Int64N(ms+1))*time.Millisecond
	}
	const first = time.Second
	var out []ChaosFault
	misses := 0
	for t := first + between(0, 500*time.Millisecond); t+tm.window <= d && misses < 50; {
		kind := kinds[r.IntN(len(kinds))]
		long := kind == ChaosPause && r.IntN(5) < 2
		destructive := kind == ChaosKill || long
		var cands []*frag
		for _, f := range frags {
			if !destructive || f.budget > 0 {
				cands = append(cands, f)
			}
		}
		if len(cands) == 0 {
			misses++ // draw again: a non-destructive kind may still fit
			continue
		}
		fr := cands[r.IntN(len(cands))]
		// The current primary most often, then its successor, then a spare.
		var host string
		switch p := r.IntN(10); {
		case p < 5:
			host = fr.hosts[0]
		case p < 8:
			host = fr.hosts[1%len(fr.hosts)]
		default:
			host = fr.hosts[r.IntN(len(fr.hosts))]
		}
		f := ChaosFault{At: t, Kind: kind, Host: host, Destructive: destructive}
		switch {
		case kind == ChaosKill:
		case long:
			f.For = between(tm.longMin, tm.longMax)
		default:
			f.For = between(tm.shortMin, tm.short)
		}
		if kind == ChaosPartition {
			others := slices.DeleteFunc(slices.Clone(all), func(h string) bool { return h == host })
			if r.IntN(2) == 0 { // cut one link only
				others = []string{others[r.IntN(len(others))]}
			}
			f.Others = others
		}
		if f.End()+tm.window > d {
			misses++ // too long for the time left: draw again
			continue
		}
		out = append(out, f)
		gap := tm.window / 2
		if destructive {
			fr.budget--
			fr.hosts = slices.DeleteFunc(fr.hosts, func(h string) bool { return h == host })
			gap = tm.window
		}
		t = f.End() + gap + between(0, 500*time.Millisecond)
	}
	return out, nil
}

// simFaults turns the plan into the launcher's fault list. Partitions
// become stalls (see FaultRules.Stall).
func simFaults(plan []ChaosFault) []experiment.Fault {
	out := make([]experiment.Fault, 0, len(plan))
	for _, f := range plan {
		sf := experiment.Fault{At: f.At, For: f.For, Host: f.Host}
		switch f.Kind {
		case ChaosKill:
			sf.Kind = experiment.FaultCrash
		case ChaosPause:
			sf.Kind = experiment.FaultPause
		case ChaosPartition:
			sf.Kind, sf.Groups = experiment.FaultPartition, [][]string{{f.Host}, f.Others}
		}
		out = append(out, sf)
	}
	return out
}

// AppliedFault is one action of the chaos schedule as the launcher
// carried it out.
type AppliedFault struct {
	// Planned and At are the planned and the actual time since the start.
	Planned time.Duration `json:"planned"`
	At      time.Duration `json:"at"`
	What    string        `json:"what"`
	Err     string        `json:"error,omitempty"`
}
