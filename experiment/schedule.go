package experiment

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/ha"
)

// FaultKind names a fault.
type FaultKind string

// Fault kinds.
const (
	FaultCrash     FaultKind = "crash"
	FaultPause     FaultKind = "pause"
	FaultPartition FaultKind = "partition"
	FaultDelay     FaultKind = "delay"
	FaultLoss      FaultKind = "loss"
	// FaultCorrupt flips one byte of the Body of strategy messages (a
	// checkpoint, say) on the selected links, with probability Loss.
	FaultCorrupt FaultKind = "corrupt"
)

// Fault is one scheduled fault.
type Fault struct {
	At   time.Duration
	Kind FaultKind
	// Host is the crashed or paused host.
	Host string
	// For is how long a pause, partition, delay or loss lasts.
	For time.Duration
	// Groups are the sides of a partition: messages between hosts of
	// different groups are dropped. Hosts in no group are unaffected.
	Groups [][]string
	// From and To select the links a delay or loss applies to ("" = any).
	From, To string
	// Delay is the extra one-way delay of a delay fault.
	Delay time.Duration
	// Loss is the loss probability of a loss fault, and the probability
	// that a corrupt fault damages a message with a Body.
	Loss float64
}

// OnLink reports whether a delay, loss or corrupt fault applies to the
// link from → to ("" matches any host).
func (f *Fault) OnLink(from, to string) bool {
	return (f.From == "" || f.From == from) && (f.To == "" || f.To == to)
}

// Seeded returns a random source derived from the run seed and labels.
func Seeded(seed uint64, labels ...string) *rand.Rand {
	return rand.New(SeededPCG(seed, labels...))
}

// SeededPCG is the generator behind Seeded(seed, labels...).
func SeededPCG(seed uint64, labels ...string) *rand.PCG {
	h := fnv.New64a()
	for _, l := range labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return rand.NewPCG(seed, h.Sum64())
}

// Schedule resolves the fault schedule against topo, the deployment of
// strategy: every host a fault names must exist in it.
func (e *Experiment) Schedule(topo *ha.Topology, strategy string) ([]Fault, error) {
	var out []Fault
	hosts := topo.Hosts()
	for i, f := range e.Faults {
		sf := Fault{At: f.At.D(), For: f.For.D()}
		switch {
		case f.Crash != "":
			sf.Kind, sf.Host = FaultCrash, f.Crash
		case f.Pause != "":
			sf.Kind, sf.Host = FaultPause, f.Pause
		case f.Partition != nil:
			sf.Kind, sf.Groups = FaultPartition, f.Partition
		case f.Delay != nil:
			sf.Kind, sf.From, sf.To, sf.Delay = FaultDelay, f.Delay.From, f.Delay.To, f.Delay.Extra.D()
		case f.Loss != nil:
			sf.Kind, sf.From, sf.To, sf.Loss = FaultLoss, f.Loss.From, f.Loss.To, f.Loss.P
		case f.Corrupt != nil:
			sf.Kind, sf.From, sf.To, sf.Loss = FaultCorrupt, f.Corrupt.From, f.Corrupt.To, f.Corrupt.P
		}
		for _, h := range append([]string{sf.Host, sf.From, sf.To}, slices.Concat(sf.Groups...)...) {
			if h != "" && !slices.Contains(hosts, h) {
				return nil, fmt.Errorf("%w: faults[%d]: node %q does not exist under strategy %s (it has %d hosts per node: raise spares)",
					ErrConfig, i, h, strategy, len(topo.Frags[0].Hosts))
			}
		}
		out = append(out, sf)
	}
	return out, nil
}

// FaultDescriptions describes the fault schedule in words.
func (e *Experiment) FaultDescriptions() []string {
	out := []string{}
	for _, f := range e.Faults {
		at := f.At.D().String()
		switch {
		case f.Crash != "":
			out = append(out, fmt.Sprintf("crash %s at %s", f.Crash, at))
		case f.Pause != "":
			out = append(out, fmt.Sprintf("pause %s at %s for %s", f.Pause, at, f.For.D()))
		case f.Partition != nil:
			var gs []string
			for _, g := range f.Partition {
				gs = append(gs, "["+strings.Join(g, " ")+"]")
			}
			out = append(out, fmt.Sprintf("partition %s at %s for %s", strings.Join(gs, " | "), at, f.For.D()))
		case f.Delay != nil:
			out = append(out, fmt.Sprintf("delay %s→%s +%s at %s for %s", any1(f.Delay.From), any1(f.Delay.To), f.Delay.Extra.D(), at, f.For.D()))
		case f.Loss != nil:
			out = append(out, fmt.Sprintf("loss %s→%s p=%g at %s for %s", any1(f.Loss.From), any1(f.Loss.To), f.Loss.P, at, f.For.D()))
		case f.Corrupt != nil:
			out = append(out, fmt.Sprintf("corrupt %s→%s p=%g at %s for %s", any1(f.Corrupt.From), any1(f.Corrupt.To), f.Corrupt.P, at, f.For.D()))
		}
	}
	return out
}

func any1(s string) string {
	if s == "" {
		return "*"
	}
	return s
}
