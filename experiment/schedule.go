package experiment

import (
	"hash/fnv"
	"math/rand/v2"
	"time"
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
